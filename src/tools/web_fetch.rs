//! `web_fetch` (seed 003): fetch a URL over HTTPS and return it as markdown. HTML becomes
//! markdown with `htmd` (scripts, styles and the like dropped); text, JSON and XML come back as
//! they are; anything else is described, not shown. The result is capped and spilled by the
//! dispatcher like any tool's. The permission rules approve by domain (`web_fetch(docs.rs)`);
//! plan mode runs a fetch only where such a rule allows it.

use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;

use super::{Access, Prepared, Tool, ToolContext, ToolError, ToolOutput, parse_args};
use crate::conversation::tool_names::WEB_FETCH;

pub struct WebFetch;

#[derive(Deserialize)]
struct Args {
    url: String,
    #[serde(default)]
    prompt: Option<String>,
}

const SHAPE: &str = "{\"url\": \"https://docs.rs/serde\", \"prompt\": \"what to look for (optional)\"}";

/// Lines of the page matching the prompt's words shown first, at most.
const MAX_PROMPT_MATCHES: usize = 20;

/// The URL to fetch: https as given; http upgraded to https, except on this machine (a local
/// server has no certificate).
fn resolve_url(raw: &str) -> Result<reqwest::Url, ToolError> {
    let raw = raw.trim();
    let with_scheme = if raw.contains("://") { raw.to_string() } else { format!("https://{raw}") };
    let mut url = reqwest::Url::parse(&with_scheme)
        .map_err(|e| ToolError::new(format!("web_fetch: `{raw}` is not a URL ({e}); give a full https:// address")))?;
    match url.scheme() {
        "https" => {}
        "http" if is_local(&url) => {}
        "http" => {
            // Cannot fail: https is a valid scheme for any http URL.
            let _ = url.set_scheme("https");
        }
        other => {
            return Err(ToolError::new(format!("web_fetch fetches http(s) pages, not `{other}:` URLs")));
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ToolError::new(format!("web_fetch: `{raw}` has no host")));
    }
    Ok(url)
}

fn is_local(url: &reqwest::Url) -> bool {
    let host = url.host_str().unwrap_or("");
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A redirect target on the host (and port) the call was allowed for, over https — or plain
/// http only where the first URL was on this machine.
fn same_site(first: &reqwest::Url, next: &reqwest::Url) -> bool {
    let host = |u: &reqwest::Url| u.host_str().map(str::to_ascii_lowercase);
    let scheme_ok = next.scheme() == "https" || (next.scheme() == "http" && is_local(first) && is_local(next));
    scheme_ok && host(first) == host(next) && first.port_or_known_default() == next.port_or_known_default()
}

/// What kind of body this is, by its content type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Binary,
}

fn kind_of(content_type: &str) -> Kind {
    let ct = content_type.to_ascii_lowercase();
    if ct.is_empty() || ct.contains("html") {
        Kind::Html
    } else if ct.starts_with("text/") || ct.contains("json") || ct.contains("xml") || ct.contains("javascript") {
        Kind::Text
    } else {
        Kind::Binary
    }
}

/// HTML as markdown, without what a reader never sees.
pub fn html_to_markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec!["script", "style", "noscript", "template", "svg", "canvas", "iframe", "head"])
        .build();
    match converter.convert(html) {
        Ok(md) => md,
        // html5ever recovers from any input; an error here is an IO error on a string.
        Err(e) => format!("[the page could not be converted to markdown: {e}]"),
    }
}

/// The text of the page's `<title>`, if it has one.
fn title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title")?;
    let text = html.get(open_end..close)?.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

/// Lines of `page` containing a word (four letters or more) of `prompt`, numbered.
fn matches_for(prompt: &str, page: &str) -> Vec<String> {
    let words: Vec<String> =
        prompt.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 4).map(|w| w.to_lowercase()).collect();
    if words.is_empty() {
        return Vec::new();
    }
    page.lines()
        .enumerate()
        .filter(|(_, line)| {
            let line = line.to_lowercase();
            words.iter().any(|w| line.contains(w.as_str()))
        })
        .take(MAX_PROMPT_MATCHES)
        .map(|(i, line)| format!("{:>5}: {}", i + 1, crate::conversation::clip(line.trim(), 300)))
        .collect()
}

impl Tool for WebFetch {
    fn name(&self) -> &'static str {
        WEB_FETCH
    }

    fn description(&self) -> &'static str {
        include_str!("../../assets/prompts/tools/web_fetch.md").trim_end()
    }

    fn schema(&self) -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The page to fetch (https; http is upgraded)."},
                "prompt": {"type": "string", "description": "What you are looking for: the page's lines that mention it are listed first."}
            },
            "required": ["url"]
        })
    }

    fn access(&self) -> Access {
        Access::Network
    }

    fn prepare(&self, args: &serde_json::Value, _ctx: &ToolContext) -> Result<Prepared, ToolError> {
        let args: Args = parse_args("web_fetch", args, SHAPE)?;
        let url = resolve_url(&args.url)?;
        Ok(Prepared::new(url.to_string()))
    }

    fn execute<'a>(
        &'a self,
        args: &'a serde_json::Value,
        prepared: Prepared,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: Args = parse_args("web_fetch", args, SHAPE)?;
            let url = resolve_url(&prepared.summary)?;
            let timeout = Duration::from_millis(ctx.config.web_fetch_timeout_ms);
            let fetch = fetch(url, ctx.config.web_fetch_max_bytes);
            let page = tokio::select! {
                biased;
                _ = ctx.cancel.cancelled() => return Err(ToolError::new("[interrupted by the user]")),
                _ = tokio::time::sleep(timeout) => {
                    return Err(ToolError::new(format!(
                        "web_fetch: {} did not answer within {} s",
                        prepared.summary,
                        timeout.as_secs()
                    )));
                }
                page = fetch => page?,
            };
            let Fetched { final_url, status, content_type, body, cut_at } = page;
            let kind = kind_of(&content_type);
            let text = match kind {
                Kind::Binary => {
                    return Ok(ToolOutput::text(format!(
                        "{final_url} is {content_type}, {} bytes of binary content, not shown.",
                        body.len()
                    )));
                }
                Kind::Html | Kind::Text => String::from_utf8_lossy(&body).into_owned(),
            };
            let (heading, page) = match kind {
                Kind::Html => {
                    let heading = title(&text);
                    let md = tokio::task::spawn_blocking(move || html_to_markdown(&text))
                        .await
                        .map_err(|e| ToolError::new(format!("web_fetch: converting the page failed: {e}")))?;
                    (heading, md)
                }
                Kind::Text | Kind::Binary => (None, text),
            };
            let mut out = String::new();
            if let Some(heading) = heading {
                out.push_str(&format!("# {heading}\n"));
            }
            out.push_str(&format!("Source: {final_url}"));
            if !(200..300).contains(&status) {
                out.push_str(&format!(" (HTTP {status})"));
            }
            if let Some(limit) = cut_at {
                out.push_str(&format!(" — only its first {limit} bytes were read (tools.web_fetch_max_bytes)"));
            }
            out.push_str("\n\n");
            if let Some(prompt) = args.prompt.as_deref().filter(|p| !p.trim().is_empty()) {
                let found = matches_for(prompt, &page);
                if !found.is_empty() {
                    out.push_str(&format!(
                        "Lines mentioning “{}” (line: text):\n{}\n\n---\n\n",
                        prompt.trim(),
                        found.join("\n")
                    ));
                }
            }
            out.push_str(page.trim());
            Ok(ToolOutput { content: out, is_error: !(200..400).contains(&status), ..Default::default() })
        })
    }
}

struct Fetched {
    final_url: reqwest::Url,
    status: u16,
    content_type: String,
    body: Vec<u8>,
    /// The body was longer than the limit and was cut there.
    cut_at: Option<usize>,
}

/// Redirects followed at most, each checked before it is followed.
const MAX_REDIRECTS: usize = 10;

async fn fetch(url: reqwest::Url, max_bytes: usize) -> Result<Fetched, ToolError> {
    let client = crate::net::build_client_with(url.as_str(), reqwest::redirect::Policy::none())
        .map_err(|e| ToolError::new(format!("web_fetch: {e}")))?;
    let mut current = url.clone();
    let mut hops = 0;
    let response = loop {
        let response = client
            .get(current.clone())
            .header(reqwest::header::ACCEPT, "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5")
            .send()
            .await
            .map_err(|e| ToolError::new(format!("web_fetch: fetching {current} failed: {e}")))?;
        let location = response.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok());
        let (true, Some(location)) = (response.status().is_redirection(), location) else { break response };
        let next = current.join(location).map_err(|e| {
            ToolError::new(format!("web_fetch: {current} redirects to `{location}`, which is not a URL ({e})"))
        })?;
        // The permission was given for the first host: a redirect elsewhere is not followed
        // (nothing is sent there); the model may ask for that page in a call of its own.
        if !same_site(&url, &next) {
            return Err(ToolError::new(format!(
                "{url} redirects to another host: {next}. It was not fetched; call web_fetch with that URL if you need it."
            )));
        }
        hops += 1;
        if hops > MAX_REDIRECTS {
            return Err(ToolError::new(format!("web_fetch: {url} redirects more than {MAX_REDIRECTS} times")));
        }
        current = next;
    };
    let final_url = response.url().clone();
    let status = response.status().as_u16();
    let content_type =
        response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let mut body = Vec::new();
    let mut cut_at = None;
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ToolError::new(format!("web_fetch: reading {url} failed: {e}")))?;
        let room = max_bytes.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            cut_at = Some(max_bytes);
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Fetched { final_url, status, content_type, body, cut_at })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loopback server answering every request with `reply(path)`; it counts requests.
    fn server(
        reply: impl Fn(&str) -> String + Send + 'static,
    ) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut buf = [0u8; 2048];
                let n = stream.read(&mut buf).unwrap_or(0);
                let request = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = request.split(' ').nth(1).unwrap_or("/").to_string();
                let _ = stream.write_all(reply(&path).as_bytes());
            }
        });
        (port, seen)
    }

    #[tokio::test]
    async fn a_redirect_is_checked_before_it_is_followed() {
        let (elsewhere, reached) =
            server(|_| "HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\nstolen".into());
        let (port, _) = server(move |path| match path {
            "/away" => format!(
                "HTTP/1.1 302 Found\r\nlocation: http://localhost:{elsewhere}/x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            ),
            "/here" => "HTTP/1.1 301 Moved\r\nlocation: /page\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
            _ => "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\nconnection: close\r\n\r\nfound"
                .into(),
        });
        let away = fetch(resolve_url(&format!("http://127.0.0.1:{port}/away")).unwrap(), 1000).await;
        let Err(e) = away else { panic!("followed a redirect to another host") };
        assert!(e.0.contains("redirects to another host") && e.0.contains("not fetched"), "{}", e.0);
        assert_eq!(reached.load(std::sync::atomic::Ordering::SeqCst), 0, "the other server got a request");
        let here = fetch(resolve_url(&format!("http://127.0.0.1:{port}/here")).unwrap(), 1000).await.unwrap();
        assert_eq!(here.body, b"found");
        assert!(here.final_url.path() == "/page", "{}", here.final_url);
    }

    #[test]
    fn urls_are_https_except_on_this_machine() {
        assert_eq!(resolve_url("http://example.com/a").unwrap().as_str(), "https://example.com/a");
        assert_eq!(resolve_url("docs.rs/serde").unwrap().as_str(), "https://docs.rs/serde");
        assert_eq!(resolve_url("http://127.0.0.1:8080/x").unwrap().scheme(), "http");
        assert_eq!(resolve_url("http://localhost/").unwrap().scheme(), "http");
        assert!(resolve_url("ftp://x/y").unwrap_err().0.contains("ftp"));
        assert!(resolve_url("https://").is_err());
    }

    #[test]
    fn html_becomes_markdown_without_scripts() {
        let html = "<html><head><title> The  Page </title><style>p{}</style></head><body><h1>Hello</h1><script>alert(1)</script><p>Some <a href=\"/x\">link</a>.</p><ul><li>one</li></ul></body></html>";
        let md = html_to_markdown(html);
        assert!(md.contains("# Hello"), "{md}");
        assert!(md.contains("[link](/x)"), "{md}");
        assert!(md.contains("one"), "{md}");
        assert!(!md.contains("alert") && !md.contains("p{}"), "{md}");
        assert_eq!(title(html).as_deref(), Some("The Page"));
    }

    #[test]
    fn a_prompt_lists_the_lines_that_mention_it() {
        let page = "intro\nthe retry budget is 8\nnothing\nRetry after 30s";
        let found = matches_for("retry budget", page);
        assert_eq!(found.len(), 2);
        assert!(found[0].starts_with("    2:"), "{found:?}");
        assert!(matches_for("a an", page).is_empty());
        assert_eq!(kind_of("text/html; charset=utf-8"), Kind::Html);
        assert_eq!(kind_of("application/json"), Kind::Text);
        assert_eq!(kind_of("image/png"), Kind::Binary);
    }
}
