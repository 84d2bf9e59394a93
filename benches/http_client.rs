//! What building an HTTP client costs, before and after the TLS setup is shared.
//!
//! `cargo bench --bench http_client` (Linux and the BSDs):
//! - `roots: bundle and folder` — the system roots as reqwest's platform verifier loads them,
//!   for every client: the CA bundle, then every file of the certificate folder (each root twice);
//! - `roots: bundle only` — what cairn now loads, once per process, on a thread of its own;
//! - `client: reqwest default` — one client as cairn built it before (roots loaded each time);
//! - `client: cairn build_client` — one client now, the shared TLS setup already built.

#[cfg(all(unix, not(target_vendor = "apple")))]
fn main() {
    use std::hint::black_box;

    use criterion::Criterion;

    let _ = rustls::crypto::ring::default_provider().install_default();
    let bundle = openssl_probe::probe().cert_file.expect("a CA bundle on this system");
    println!(
        "roots: {} from bundle and folder, {} from the bundle alone",
        rustls_native_certs::load_native_certs().certs.len(),
        rustls_native_certs::load_certs_from_paths(Some(&bundle), None).certs.len()
    );
    // Build the shared setup once, as the warm-up thread does before the first client.
    cairn::net::build_client("https://api.anthropic.com").expect("a client");
    let mut c = Criterion::default().configure_from_args().sample_size(50);
    c.bench_function("roots: bundle and folder", |b| b.iter(|| black_box(rustls_native_certs::load_native_certs())));
    c.bench_function("roots: bundle only", |b| {
        b.iter(|| black_box(rustls_native_certs::load_certs_from_paths(Some(&bundle), None)))
    });
    c.bench_function("client: reqwest default", |b| {
        b.iter(|| black_box(reqwest::Client::builder().build().expect("a client")))
    });
    c.bench_function("client: cairn build_client", |b| {
        b.iter(|| black_box(cairn::net::build_client("https://api.anthropic.com").expect("a client")))
    });
    c.final_summary();
}

#[cfg(not(all(unix, not(target_vendor = "apple"))))]
fn main() {
    println!("the shared TLS setup is for Linux and the BSDs; elsewhere reqwest's platform verifier is used as is");
}
