//! Shell quoting for the commands the reports print (replay commands): a word a POSIX shell
//! reads as itself is left as it is, any other is put in single quotes.

/// `word` as a POSIX shell word: unchanged when it holds only characters no shell treats
/// specially (letters, digits and `_ - . / : , + = @ %`), else in single quotes, each `'`
/// in it written `'\''`. The empty word is `''`.
pub fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:,+=@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_owned();
    }
    let mut out = String::with_capacity(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_are_unchanged() {
        for w in [
            "jostle",
            "--report",
            "target/thumbv7m-none-eabi/release/rf_fig2",
            "examples/src/bin/rf_fig2.rs:19:10,examples/src/bin/rf_fig2.rs:26:7",
            "0123456789abcdef",
            "--seed=5051189252919671458",
            "a+b@c%d",
        ] {
            assert_eq!(quote(w), w);
        }
    }

    #[test]
    fn other_words_are_single_quoted() {
        assert_eq!(quote(""), "''");
        assert_eq!(quote("my report"), "'my report'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote("'"), "''\\'''");
        assert_eq!(quote("$HOME"), "'$HOME'");
        assert_eq!(quote("a;rm -rf ~"), "'a;rm -rf ~'");
        assert_eq!(quote("`x`"), "'`x`'");
        assert_eq!(quote("tab\there"), "'tab\there'");
        assert_eq!(quote("new\nline"), "'new\nline'");
        assert_eq!(quote("*.elf"), "'*.elf'");
        assert_eq!(quote("~/fw"), "'~/fw'");
        assert_eq!(quote("héllo"), "'héllo'");
        assert_eq!(quote("a\\b"), "'a\\b'");
    }

    /// What `sh` reads back is the word itself.
    #[cfg(unix)]
    #[test]
    fn the_shell_reads_back_the_word() {
        for w in [
            "plain",
            "",
            "two words",
            "it's",
            "''",
            "$(echo x)",
            "a\"b",
            "back\\slash",
            "new\nline",
            "*",
            "-n",
            "é ü",
        ] {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("printf '%s' {}", quote(w)))
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8(out.stdout).unwrap(),
                w,
                "{w:?} as {}",
                quote(w)
            );
        }
    }
}
