//! The TLS side of `tls_echo`: a self-signed certificate made at start,
//! the server's acceptor, and a client's connector that trusts that one
//! certificate and nothing else.

use std::io;
use std::sync::Arc;

use futures_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use futures_rustls::rustls::{self, ClientConfig, RootCertStore, ServerConfig};
use futures_rustls::{TlsAcceptor, TlsConnector};

/// A certificate and its key.
pub struct Identity {
    /// The certificate, PEM: what a client must trust.
    #[allow(dead_code)] // printed by main.rs; the test trusts `cert` directly
    pub cert_pem: String,
    cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
}

impl Identity {
    /// A new self-signed certificate for `host`.
    pub fn self_signed(host: &str) -> io::Result<Identity> {
        let made =
            rcgen::generate_simple_self_signed(vec![host.to_string()]).map_err(io::Error::other)?;
        Ok(Identity {
            cert_pem: made.cert.pem(),
            cert: made.cert.der().clone(),
            key: PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()),
        })
    }

    /// The server's side: TLS 1.3 (and 1.2) with this certificate.
    // tests/compat/tokio_libs.rs takes the settings alone.
    #[allow(dead_code)]
    pub fn acceptor(&self) -> io::Result<TlsAcceptor> {
        Ok(TlsAcceptor::from(self.server_config()?))
    }

    /// The server's settings, for any rustls acceptor (tokio-rustls's in
    /// tests/compat/tokio_libs.rs).
    pub fn server_config(&self) -> io::Result<Arc<ServerConfig>> {
        let config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(io::Error::other)?
            .with_no_client_auth()
            .with_single_cert(
                vec![self.cert.clone()],
                PrivateKeyDer::Pkcs8(self.key.clone_key()),
            )
            .map_err(io::Error::other)?;
        Ok(Arc::new(config))
    }

    /// A client's side that trusts this certificate only.
    // The example is a server; its test is the client.
    #[allow(dead_code)]
    pub fn connector(&self) -> io::Result<TlsConnector> {
        Ok(TlsConnector::from(self.client_config()?))
    }

    /// The client's settings: this certificate trusted, nothing else.
    #[allow(dead_code)]
    pub fn client_config(&self) -> io::Result<Arc<ClientConfig>> {
        let mut roots = RootCertStore::empty();
        roots.add(self.cert.clone()).map_err(io::Error::other)?;
        let config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(io::Error::other)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Arc::new(config))
    }
}

/// The crypto provider, named rather than left to a process-wide default:
/// *ring*, the one feature the build enables.
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}
