//! Certificates made for the tests: a CA of the test's own and a
//! certificate for 127.0.0.1 it signed (a TLS server whose CA is given
//! by a flag or a URL, as a private network's would be).

/// A CA named `name` (its certificate, PEM), and a certificate for
/// 127.0.0.1 it signed with its key (PEM).
pub fn ca_and_leaf(name: &str) -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name.push(rcgen::DnType::CommonName, name);
    let ca = rcgen::CertifiedIssuer::self_signed(ca, ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    (ca.pem(), leaf.pem(), key.serialize_pem())
}
