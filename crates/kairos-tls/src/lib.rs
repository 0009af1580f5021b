//! How Kairos trusts a TLS server: the web's roots (webpki-roots), plus,
//! for a server with a certificate of the person's own making (a
//! self-hosted Nextcloud or Radicale, a Kairos sync server), the CA
//! certificates they give as PEM. One place for `kairos sync join --ca`
//! and `kairos caldav add --ca`.
//!
//! What a person gives as "the CA" is often no CA at all but the server's
//! own self-signed certificate: [`own`] trusts a server presenting exactly
//! that certificate, and names the problem when it presents another.

use std::sync::Arc;

mod own;

pub use own::{NotTheGivenCertificate, problem};

use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

/// The most CA certificates one PEM text may hold (a bundle of a few is
/// normal; thousands is a mistake, e.g. the whole system store).
pub const MAX_CAS: usize = 64;

/// The CA certificates in `pem`, checked: at least one, at most
/// [`MAX_CAS`], each one rustls accepts as a trust anchor.
///
/// # Errors
/// Text that holds no certificate, one that does not parse, too many.
pub fn ca_certificates(pem: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    anchors(pem, &mut rustls::RootCertStore::empty())
}

/// [`ca_certificates`], each one also added to `roots` (which is how
/// rustls checks it as a trust anchor).
fn anchors(
    pem: &str,
    roots: &mut rustls::RootCertStore,
) -> Result<Vec<CertificateDer<'static>>, String> {
    let mut certs = Vec::new();
    for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
        let cert = cert.map_err(|e| format!("CA certificate: {e}"))?;
        if certs.len() == MAX_CAS {
            return Err(format!(
                "CA certificate: more than {MAX_CAS} certificates (give only your own CA)"
            ));
        }
        roots
            .add(cert.clone())
            .map_err(|e| format!("CA certificate: {e}"))?;
        certs.push(cert);
    }
    if certs.is_empty() {
        return Err(
            "CA certificate: no \"-----BEGIN CERTIFICATE-----\" block in it (give the CA's \
             certificate in PEM form)"
                .to_owned(),
        );
    }
    Ok(certs)
}

/// What is wrong with the server's certificate, in words a person can act
/// on, if `e` (or an error it wraps, an I/O error's inner one too: hyper-
/// and tokio-rustls wrap rustls's) is rustls refusing it.
#[must_use]
pub fn refused_certificate(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cur = Some(e);
    while let Some(c) = cur {
        let mut inner: &(dyn std::error::Error + 'static) = c;
        for _ in 0..4 {
            match inner
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
            {
                Some(i) => inner = i,
                None => break,
            }
        }
        if let Some(rustls::Error::InvalidCertificate(ce)) = inner.downcast_ref::<rustls::Error>() {
            return Some(problem(ce));
        }
        cur = c.source();
    }
    None
}

/// A client configuration (ring) trusting the web's roots and, when
/// given, the CA certificates in `extra_ca_pem`; a server presenting one
/// of those certificates itself (its own self-signed one) is trusted too,
/// its host name and dates still checked ([`own`]).
///
/// # Errors
/// A CA text [`ca_certificates`] refuses; the provider's set-up.
pub fn client_config(extra_ca_pem: Option<&str>) -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let trust = trust(extra_ca_pem, provider.clone())?;
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(trust))
        .with_no_client_auth())
}

/// The verifier of [`client_config`].
fn trust(
    extra_ca_pem: Option<&str>,
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Result<own::Trust, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let given = match extra_ca_pem {
        Some(pem) => anchors(pem, &mut roots)?,
        None => Vec::new(),
    };
    let webpki =
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| e.to_string())?;
    Ok(own::Trust { webpki, given })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;

    #[test]
    fn text_without_a_certificate_is_refused_by_name() {
        let e = ca_certificates("hello").unwrap_err();
        assert!(e.contains("BEGIN CERTIFICATE"), "{e}");
        let e = client_config(Some("")).unwrap_err();
        assert!(e.contains("no"), "{e}");
    }

    #[test]
    fn a_broken_certificate_is_refused() {
        let pem = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        assert!(ca_certificates(pem).is_err());
    }

    #[test]
    fn no_extra_ca_is_the_web_roots() {
        assert!(client_config(None).is_ok());
    }
}
