//! The one HTTP client set-up every part of cairn that talks HTTP shares — the model clients,
//! MCP servers over HTTP, `web_fetch`: rustls with the ring provider and the system's roots
//! (loaded once per process), the connect deadline, the user agent, and no proxy for loopback.
//!
//! Knows no API and reads no config; never logs or formats a header value.

use std::sync::{Arc, Once, OnceLock};
use std::time::Duration;

/// Streams can run for minutes, so only connecting has a deadline; a stalled stream is caught
/// by the SSE idle timeout instead.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A client could not be built. Rare: a broken TLS setup, or a key that cannot be sent.
#[derive(Debug, thiserror::Error)]
pub enum ClientSetupError {
    #[error("could not set up the HTTP client: {0}")]
    Http(String),
    #[error(
        "{key_var} contains characters that cannot be sent in an HTTP header (a stray newline or quote?); \
         set it to the bare key"
    )]
    InvalidKey { key_var: &'static str },
    #[error("the base URL {url:?} is not a valid http(s) URL: {reason}")]
    InvalidBaseUrl { url: String, reason: String },
}

/// Installs ring as rustls's process-wide crypto provider (reqwest is built without one).
fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Err means some other part of the process installed a provider first: that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Loads the TLS setup (the system's root certificates) on a thread of its own, so that the
/// first client built — on the interface's loop, say — finds it ready. Call it early.
pub fn warm_up_tls() {
    // Nothing to wait for: whoever needs the setup first waits for it (or builds it) then.
    let _ = std::thread::Builder::new().name("cairn-tls".into()).spawn(|| {
        let _ = tls_config();
    });
}

/// The rustls configuration every client shares, built once per process. On Linux and the BSDs
/// the roots come from the system bundle alone; the platform verifier reqwest uses otherwise
/// also reads every file of the certificate folder, parsing each root a second time, and did so
/// for every client built.
#[cfg(all(unix, not(target_vendor = "apple")))]
fn tls_config() -> Result<Arc<rustls::ClientConfig>, ClientSetupError> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            install_crypto_provider();
            let mut roots = rustls::RootCertStore::empty();
            let (added, ignored) = roots.add_parsable_certificates(system_roots());
            tracing::debug!(added, ignored, "loaded the system's root certificates");
            if roots.is_empty() {
                return Err("no CA certificates were found on the system; set SSL_CERT_FILE to a bundle".into());
            }
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let mut config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?
                .with_root_certificates(roots)
                .with_no_client_auth();
            config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
            Ok(Arc::new(config))
        })
        .clone()
        .map_err(ClientSetupError::Http)
}

/// The roots OpenSSL would use: what `SSL_CERT_FILE`/`SSL_CERT_DIR` name, else the system
/// bundle file, else the certificate folder.
#[cfg(all(unix, not(target_vendor = "apple")))]
fn system_roots() -> Vec<rustls::pki_types::CertificateDer<'static>> {
    let named = ["SSL_CERT_FILE", "SSL_CERT_DIR"].iter().any(|v| std::env::var_os(v).is_some());
    let found = match openssl_probe::probe().cert_file {
        Some(bundle) if !named => rustls_native_certs::load_certs_from_paths(Some(&bundle), None),
        _ => rustls_native_certs::load_native_certs(),
    };
    for error in &found.errors {
        tracing::warn!(%error, "a CA certificate could not be loaded");
    }
    found.certs
}

/// The one place a `reqwest::Client` is configured. Loopback endpoints bypass any system proxy:
/// a local model server is never behind the user's corporate proxy.
pub fn build_client(base_url: &str) -> Result<reqwest::Client, ClientSetupError> {
    build_client_with(base_url, reqwest::redirect::Policy::default())
}

/// [`build_client`] with its own redirect policy (`web_fetch` follows none by itself: it
/// checks each redirect against its rules before it sends anything there).
pub fn build_client_with(
    base_url: &str,
    redirects: reqwest::redirect::Policy,
) -> Result<reqwest::Client, ClientSetupError> {
    install_crypto_provider();
    let url = parse_base_url(base_url)?;
    let mut builder = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(redirects)
        .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")));
    #[cfg(all(unix, not(target_vendor = "apple")))]
    {
        let config: rustls::ClientConfig = (*tls_config()?).clone();
        builder = builder.tls_backend_preconfigured(config);
    }
    if is_loopback(&url) {
        builder = builder.no_proxy();
    }
    builder.build().map_err(|e| ClientSetupError::Http(error_chain(&e)))
}

/// Checks that a base URL is usable and returns it parsed.
pub(crate) fn parse_base_url(base_url: &str) -> Result<reqwest::Url, ClientSetupError> {
    let invalid = |reason: String| ClientSetupError::InvalidBaseUrl { url: base_url.to_string(), reason };
    let url = reqwest::Url::parse(base_url).map_err(|e| invalid(e.to_string()))?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(invalid(format!("the scheme must be http or https, not {other}"))),
    }
}

fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut current = error.source();
    while let Some(e) = current {
        out.push_str(": ");
        out.push_str(&e.to_string());
        current = e.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_client_builds_without_network() {
        build_client("https://api.anthropic.com").unwrap();
        build_client("http://127.0.0.1:11434/v1").unwrap();
        // A second build must not trip over the already installed crypto provider.
        build_client("https://api.openai.com/v1").unwrap();
    }

    #[cfg(all(unix, not(target_vendor = "apple")))]
    #[test]
    fn the_tls_setup_is_built_once_and_shared() {
        let first = tls_config().unwrap();
        assert!(Arc::ptr_eq(&first, &tls_config().unwrap()), "built once");
        assert_eq!(first.alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
        // Each root once: the bundle alone, not the bundle plus the certificate folder.
        if let Some(bundle) = openssl_probe::probe().cert_file
            && std::env::var_os("SSL_CERT_FILE").is_none()
            && std::env::var_os("SSL_CERT_DIR").is_none()
        {
            let from_bundle = rustls_native_certs::load_certs_from_paths(Some(&bundle), None).certs.len();
            assert_eq!(system_roots().len(), from_bundle);
            assert!(rustls_native_certs::load_native_certs().certs.len() > from_bundle, "the folder repeats them");
        }
    }

    #[test]
    fn bad_base_urls_are_explained() {
        let err = build_client("api.anthropic.com").unwrap_err().to_string();
        assert!(err.contains("not a valid http(s) URL"), "{err}");
        let err = build_client("ftp://example.com").unwrap_err().to_string();
        assert!(err.contains("scheme must be http or https"), "{err}");
    }
}
