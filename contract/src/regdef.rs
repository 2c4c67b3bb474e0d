//! The one way registers are declared: an enum per register block whose variants carry their
//! word index, their name and their documentation, so the gateware, the host library and the
//! generated docs (`docs/regmap.md`, the C header) all read the same text.

/// One register as the documentation generators see it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RegInfo {
    pub name: &'static str,
    /// Word address on the block's register bus.
    pub word: u32,
    /// The doc comment, one entry per line.
    pub doc: &'static [&'static str],
}

impl RegInfo {
    /// The doc comment as one line, rustdoc links as plain code.
    pub fn doc_line(&self) -> String {
        doc_line(self.doc)
    }
}

/// Doc comment lines as one line of text, rustdoc links (`` [`X`] ``) as plain code.
pub fn doc_line(doc: &[&str]) -> String {
    doc.iter()
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" ")
        .replace("[`", "`")
        .replace("`]", "`")
}

/// `registers! { /// docs  Enum at BASE_WORD { /// docs  Name = index, "name"; ... } }` declares the
/// enum with `ALL`, `COUNT`, `index()`, `word()` (`BASE_WORD + index`), `offset()` (bytes),
/// `name()`, `doc()` and `info()`.
macro_rules! registers {
    ($(#[$edoc:meta])* $enum:ident at $base:expr;
     { $($(#[doc = $doc:literal])* $name:ident = $index:literal, $label:literal;)* }) => {
        $(#[$edoc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $enum {
            $($(#[doc = $doc])* $name = $index,)*
        }

        impl $enum {
            pub const ALL: [$enum; [$($enum::$name),*].len()] = [$($enum::$name),*];
            pub const COUNT: usize = Self::ALL.len();
            /// Word address of index 0 on the register bus.
            pub const BASE_WORD: u32 = $base;

            pub const fn index(self) -> usize {
                self as usize
            }

            /// Word address on the register bus.
            pub const fn word(self) -> u32 {
                Self::BASE_WORD + self as u32
            }

            /// Byte offset on the register bus (`4 * word`).
            pub const fn offset(self) -> u32 {
                4 * self.word()
            }

            pub const fn name(self) -> &'static str {
                match self {
                    $($enum::$name => $label,)*
                }
            }

            /// The register's documentation, one entry per line.
            pub const fn doc(self) -> &'static [&'static str] {
                match self {
                    $($enum::$name => &[$($doc),*],)*
                }
            }

            pub const fn info(self) -> $crate::regdef::RegInfo {
                $crate::regdef::RegInfo {
                    name: self.name(),
                    word: self.word(),
                    doc: self.doc(),
                }
            }
        }
    };
}

pub(crate) use registers;
