//! README.md read as GitHub reads it (CommonMark, with pulldown-cmark): every `## ` heading of
//! the source is a heading, and no code block swallowed a heading or another fence — the mark of
//! a fence that was not closed where it was meant to be.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

fn problems(markdown: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut headings = 0;
    let mut code: Option<String> = None;
    for event in Parser::new_ext(markdown, Options::all()) {
        match event {
            Event::Start(Tag::Heading { level: HeadingLevel::H2, .. }) => headings += 1,
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) => code = Some(String::new()),
            Event::Text(text) => {
                if let Some(block) = &mut code {
                    block.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                let Some(block) = code.take() else { continue };
                for line in block.lines() {
                    if line.starts_with("```") || line.starts_with("## ") {
                        problems.push(format!("a code block holds {line:?}: a fence before it is not closed"));
                    }
                }
            }
            _ => {}
        }
    }
    let in_source = markdown.lines().filter(|l| l.starts_with("## ")).count();
    if headings != in_source {
        problems.push(format!("{in_source} `## ` lines but {headings} headings: some are inside a code block"));
    }
    problems
}

#[test]
fn the_readme_renders_as_commonmark_with_every_fence_closed() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert_eq!(problems(&readme), Vec::<String>::new());
}

#[test]
fn text_after_a_closing_fence_is_caught() {
    let broken = "## One\n\n```toml\na = 1\n``` trailing words\n\n## Two\n\n```\ncode\n```\n";
    assert!(!problems(broken).is_empty());
    assert!(problems("## One\n\n```toml\na = 1\n```\n\n## Two\n").is_empty());
}
