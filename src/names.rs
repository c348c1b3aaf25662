//! Names with one definition. The service's vocabulary (algorithms, heuristics,
//! partitions, objectives, statuses, reasons) is written out in JSON, on the command
//! line, in the store's columns, in metrics labels and in `openapi.yaml`; each enum
//! holds its names once, and every list is derived from it.

/// An enum of plain variants, each with the one name it has everywhere outside the
/// code: `ALL` and `NAMES` in declaration order, `name`, `parse`, `Display`.
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $enum:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $name:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $enum {
            $($(#[$variant_meta])* $variant,)+
        }

        impl $enum {
            pub const ALL: &'static [$enum] = &[$($enum::$variant,)+];
            pub const NAMES: &'static [&'static str] = &[$($name,)+];

            pub fn name(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)+
                }
            }

            pub fn parse(name: &str) -> Option<$enum> {
                match name {
                    $($name => Some($enum::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $enum {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

#[cfg(test)]
mod tests {
    named_enum! {
        enum Colour {
            Red = "red",
            DarkBlue = "dark-blue",
        }
    }

    #[test]
    fn names_and_variants_correspond_both_ways() {
        assert_eq!(Colour::NAMES, ["red", "dark-blue"]);
        for (&colour, &name) in Colour::ALL.iter().zip(Colour::NAMES) {
            assert_eq!(colour.name(), name);
            assert_eq!(Colour::parse(name), Some(colour));
            assert_eq!(colour.to_string(), name);
        }
        assert_eq!(Colour::parse("Red"), None);
    }
}
