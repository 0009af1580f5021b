//! A self-hosted server's own self-signed certificate given as "the CA".
//!
//! webpki takes a self-signed certificate as a trust anchor, and accepts a
//! server presenting it when the certificate is an ordinary leaf (rcgen's
//! default). It refuses one that says it is a CA (`CA:TRUE`, what
//! `openssl req -x509` makes by default) as the server's own certificate
//! (`CaUsedAsEndEntity`). [`Trust`] accepts such a server when it presents
//! **exactly** (DER equality) one of the certificates the person gave,
//! still checking the host name, the validity dates and the key usage; the
//! handshake's signatures are checked against that certificate's key as
//! always. Any other self-signed certificate is refused with
//! [`NotTheGivenCertificate`], which says what to do.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, Error, OtherError, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

/// The web's roots and the person's CAs (webpki), plus the given
/// certificates a server may present as they are.
#[derive(Debug)]
pub(crate) struct Trust {
    pub(crate) webpki: Arc<WebPkiServerVerifier>,
    /// Every certificate given (`--ca`); one of them presented by the
    /// server itself is trusted as that server's certificate.
    pub(crate) given: Vec<CertificateDer<'static>>,
}

/// A server presented a self-signed certificate that is not the one given
/// as its CA.
#[derive(Debug)]
pub struct NotTheGivenCertificate {
    /// Whether a certificate was given at all.
    pub any_given: bool,
}

impl std::fmt::Display for NotTheGivenCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.any_given {
            f.write_str(
                "it is a self-signed certificate, but not the one given as the CA certificate \
                 (its key differs, even if its name is the same): if the server's certificate \
                 was made anew, give the new one (PEM) as the CA certificate; else someone may \
                 be between you and the server",
            )
        } else {
            f.write_str(
                "it is a self-signed certificate this computer does not know: give that \
                 certificate (PEM) as the CA certificate",
            )
        }
    }
}

impl std::error::Error for NotTheGivenCertificate {}

fn refused(e: CertificateError) -> Error {
    Error::InvalidCertificate(e)
}

/// Whether `der` is self-signed: its issuer is its subject.
fn self_signed(der: &CertificateDer<'_>) -> bool {
    webpki::EndEntityCert::try_from(der).is_ok_and(|c| c.issuer() == c.subject())
}

/// The checks a certificate trusted as it is still gets: the host name,
/// the validity dates, the purpose (when it names any).
fn check_given(
    der: &CertificateDer<'_>,
    name: &ServerName<'_>,
    now: UnixTime,
) -> Result<(), Error> {
    let ee =
        webpki::EndEntityCert::try_from(der).map_err(|_| refused(CertificateError::BadEncoding))?;
    ee.verify_is_valid_for_subject_name(name)
        .map_err(|_| refused(CertificateError::NotValidForName))?;
    let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref())
        .map_err(|_| refused(CertificateError::BadEncoding))?;
    let now = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
    let validity = cert.validity();
    if now < validity.not_before.timestamp() {
        return Err(refused(CertificateError::NotValidYet));
    }
    if now > validity.not_after.timestamp() {
        return Err(refused(CertificateError::Expired));
    }
    match cert.extended_key_usage() {
        Ok(None) => Ok(()),
        Ok(Some(eku)) if eku.value.any || eku.value.server_auth => Ok(()),
        Ok(Some(_)) => Err(refused(CertificateError::InvalidPurpose)),
        Err(_) => Err(refused(CertificateError::BadEncoding)),
    }
}

/// Whether `e` is about who issued the certificate (not its name, dates,
/// or revocation, which stay as they are).
fn about_the_issuer(e: &Error) -> bool {
    matches!(
        e,
        Error::InvalidCertificate(
            CertificateError::UnknownIssuer
                | CertificateError::BadSignature
                | CertificateError::Other(_)
        )
    )
}

impl ServerCertVerifier for Trust {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let e = match self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        if self.given.iter().any(|g| g.as_ref() == end_entity.as_ref()) {
            check_given(end_entity, server_name, now)?;
            return Ok(ServerCertVerified::assertion());
        }
        if about_the_issuer(&e) && self_signed(end_entity) {
            return Err(refused(CertificateError::Other(OtherError(Arc::new(
                NotTheGivenCertificate {
                    any_given: !self.given.is_empty(),
                },
            )))));
        }
        Err(e)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// What is wrong with a certificate rustls refused, in words a person
/// can act on.
#[must_use]
pub fn problem(e: &CertificateError) -> String {
    use CertificateError as C;
    match e {
        C::UnknownIssuer => {
            "it is signed by an authority this computer does not know (self-signed?)".to_owned()
        }
        C::Expired | C::ExpiredContext { .. } => "it has expired".to_owned(),
        C::NotValidYet | C::NotValidYetContext { .. } => "it is not valid yet".to_owned(),
        C::NotValidForName | C::NotValidForNameContext { .. } => {
            "it was not issued for this host name".to_owned()
        }
        C::Revoked => "it has been revoked".to_owned(),
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => {
            "it is not meant for a server (its extended key usage)".to_owned()
        }
        C::Other(OtherError(inner)) => match inner.downcast_ref::<NotTheGivenCertificate>() {
            Some(n) => n.to_string(),
            None => format!("{inner}"),
        },
        other => format!("{other}"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    /// 2026-12-06, the tests' "now".
    const NOW: u64 = 1_796_515_200;

    /// A self-signed certificate for `names` with the subject every such
    /// test certificate has; `ca` as `openssl req -x509` makes it.
    fn cert(names: &[&str], ca: bool, edit: impl FnOnce(&mut rcgen::CertificateParams)) -> String {
        let key = rcgen::KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut p = rcgen::CertificateParams::new(names).unwrap();
        p.distinguished_name
            .push(rcgen::DnType::CommonName, "my-nas.home");
        if ca {
            p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        }
        edit(&mut p);
        p.self_signed(&key).unwrap().pem()
    }

    fn der(pem: &str) -> CertificateDer<'static> {
        crate::ca_certificates(pem).unwrap().remove(0)
    }

    /// What the verifier says of a server presenting `presented` at `host`,
    /// `pem` given as the CA.
    fn verify(pem: &str, presented: &str, host: &str) -> Result<(), String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let trust = crate::trust(Some(pem), provider).unwrap();
        let name = ServerName::try_from(host.to_owned()).unwrap();
        trust
            .verify_server_cert(
                &der(presented),
                &[],
                &name,
                &[],
                UnixTime::since_unix_epoch(std::time::Duration::from_secs(NOW)),
            )
            .map(|_| ())
            .map_err(|e| match e {
                Error::InvalidCertificate(c) => problem(&c),
                e => e.to_string(),
            })
    }

    #[test]
    fn the_given_certificate_itself_is_trusted_leaf_or_ca() {
        for ca in [false, true] {
            let c = cert(&["127.0.0.1", "localhost"], ca, |_| {});
            assert_eq!(verify(&c, &c, "localhost"), Ok(()), "ca: {ca}");
            assert_eq!(verify(&c, &c, "127.0.0.1"), Ok(()), "ca: {ca}");
        }
    }

    #[test]
    fn the_given_certificate_still_needs_the_host_name() {
        for ca in [false, true] {
            let c = cert(&["localhost"], ca, |_| {});
            let e = verify(&c, &c, "nas.example").unwrap_err();
            assert!(e.contains("not issued for this host name"), "{e}");
        }
    }

    #[test]
    fn the_given_certificate_still_needs_its_dates() {
        for ca in [false, true] {
            let c = cert(&["localhost"], ca, |p| {
                p.not_before = rcgen::date_time_ymd(2020, 1, 1);
                p.not_after = rcgen::date_time_ymd(2021, 1, 1);
            });
            let e = verify(&c, &c, "localhost").unwrap_err();
            assert!(e.contains("expired"), "{e}");
            let c = cert(&["localhost"], ca, |p| {
                p.not_before = rcgen::date_time_ymd(2030, 1, 1);
            });
            let e = verify(&c, &c, "localhost").unwrap_err();
            assert!(e.contains("not valid yet"), "{e}");
        }
    }

    #[test]
    fn the_given_certificate_still_needs_to_be_meant_for_a_server() {
        for ca in [false, true] {
            let c = cert(&["localhost"], ca, |p| {
                p.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
            });
            let e = verify(&c, &c, "localhost").unwrap_err();
            assert!(e.contains("not meant for a server"), "{e}");
        }
    }

    #[test]
    fn another_self_signed_certificate_with_the_same_names_is_refused_by_name() {
        for ca in [false, true] {
            let given = cert(&["localhost"], ca, |_| {});
            let other = cert(&["localhost"], ca, |_| {});
            let e = verify(&given, &other, "localhost").unwrap_err();
            assert!(
                e.contains("not the one given as the CA certificate"),
                "ca {ca}: {e}"
            );
        }
    }

    #[test]
    fn a_self_signed_server_with_nothing_given_is_named_so() {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let trust = crate::trust(None, provider).unwrap();
        let c = cert(&["localhost"], true, |_| {});
        let name = ServerName::try_from("localhost").unwrap();
        let now = UnixTime::since_unix_epoch(std::time::Duration::from_secs(NOW));
        let Err(Error::InvalidCertificate(e)) =
            trust.verify_server_cert(&der(&c), &[], &name, &[], now)
        else {
            panic!("trusted a self-signed certificate nobody gave");
        };
        let e = problem(&e);
        assert!(
            e.contains("self-signed certificate this computer does not know"),
            "{e}"
        );
    }
}
