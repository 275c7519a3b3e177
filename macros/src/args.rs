//! The attribute's arguments: `Builder` settings, as in
//! `#[ioloop::main(max_blocking_threads = 4)]` or
//! `#[ioloop::test(start_paused = true)]`.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Ident, LitBool, LitInt, Token};

/// The `Builder` methods taking a `usize` that an argument may name. Each
/// must be at least 1, so all are checked here the same way, and a zero is
/// refused at compile time rather than by the builder's panic at run time.
const COUNTS: [&str; 3] = ["event_interval", "events_capacity", "max_blocking_threads"];

/// The `Builder` methods taking a `bool` that an argument may name.
const SWITCHES: [&str; 1] = ["start_paused"];

/// The settings given, in the order written: each a `Builder` method and
/// its argument, a positive integer or a `bool` literal.
pub(crate) struct Args {
    settings: Vec<(Ident, TokenStream)>,
}

impl Args {
    /// Parses `name = value, ...`; the error points at the offending
    /// name or value.
    pub(crate) fn parse(tokens: TokenStream) -> syn::Result<Args> {
        let mut args = Args {
            settings: Vec::new(),
        };
        syn::meta::parser(|meta| args.setting(meta)).parse2(tokens)?;
        Ok(args)
    }

    fn setting(&mut self, meta: ParseNestedMeta<'_>) -> syn::Result<()> {
        let known = |name: &Ident| {
            let name = name.to_string();
            COUNTS.contains(&&*name) || SWITCHES.contains(&&*name)
        };
        let Some(name) = meta.path.get_ident().filter(|name| known(name)) else {
            return Err(meta.error(format_args!(
                "unknown argument; the arguments are `Builder` settings: {}, {}",
                COUNTS.join(", "),
                SWITCHES.join(", ")
            )));
        };
        if self.settings.iter().any(|(seen, _)| seen == name) {
            return Err(meta.error(format_args!("`{name}` is given twice")));
        }
        let switch = SWITCHES.contains(&&*name.to_string());
        let example = if switch { "true" } else { "1" };
        if !meta.input.peek(Token![=]) {
            return Err(meta.error(format_args!("`{name}` takes a value: `{name} = {example}`")));
        }
        let input = meta.value()?;
        let value = if switch {
            let value: LitBool = input.parse().map_err(|err| {
                syn::Error::new(err.span(), format_args!("`{name}` takes `true` or `false`"))
            })?;
            value.into_token_stream()
        } else {
            let value: LitInt = input.parse()?;
            if value.base10_parse::<usize>()? == 0 {
                return Err(syn::Error::new(
                    value.span(),
                    format_args!("`{name}` must be at least 1"),
                ));
            }
            value.into_token_stream()
        };
        self.settings.push((name.clone(), value));
        Ok(())
    }

    /// An expression that runs `future` to completion on a new runtime:
    /// `ioloop::block_on` without settings, else a runtime from a
    /// `Builder`. Either panics if the OS refuses the runtime's fds, as
    /// `ioloop::block_on` does: `main` and a test have no caller to hand
    /// the error to.
    pub(crate) fn block_on(&self, future: TokenStream) -> TokenStream {
        if self.settings.is_empty() {
            return quote! { ::ioloop::block_on(#future) };
        }
        let names = self.settings.iter().map(|(name, _)| name);
        let values = self.settings.iter().map(|(_, value)| value);
        quote! {
            ::ioloop::Builder::new()
                #( .#names(#values) )*
                .build()
                .unwrap_or_else(|err| ::core::panic!("ioloop: cannot create a runtime: {err}"))
                .block_on(#future)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Args;
    use quote::quote;

    fn error(tokens: proc_macro2::TokenStream) -> String {
        match Args::parse(tokens) {
            Ok(_) => panic!("accepted"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn each_setting_becomes_a_builder_call_in_the_order_written() {
        let args = Args::parse(quote!(max_blocking_threads = 1, start_paused = true)).unwrap();
        let expansion = args.block_on(quote!(body)).to_string();
        let calls = expansion
            .find("max_blocking_threads (1)")
            .expect(&expansion);
        let paused = expansion.find("start_paused (true)").expect(&expansion);
        assert!(calls < paused, "{expansion}");
        assert!(expansion.contains("Builder :: new ()"), "{expansion}");
        // No settings: the plain `block_on`.
        let plain = Args::parse(quote!()).unwrap().block_on(quote!(body));
        assert_eq!(
            plain.to_string(),
            quote!(::ioloop::block_on(body)).to_string()
        );
    }

    #[test]
    fn a_setting_given_twice_is_refused_and_two_different_ones_are_not() {
        assert!(Args::parse(quote!(event_interval = 2, events_capacity = 3)).is_ok());
        assert_eq!(
            error(quote!(event_interval = 2, event_interval = 3)),
            "`event_interval` is given twice"
        );
    }

    #[test]
    fn what_is_not_a_setting_is_refused_with_what_is() {
        let unknown = error(quote!(workers = 2));
        assert!(unknown.starts_with("unknown argument"), "{unknown}");
        for name in [
            "event_interval",
            "events_capacity",
            "max_blocking_threads",
            "start_paused",
        ] {
            assert!(unknown.contains(name), "{unknown}");
        }
        assert_eq!(
            error(quote!(start_paused)),
            "`start_paused` takes a value: `start_paused = true`"
        );
        assert_eq!(
            error(quote!(event_interval)),
            "`event_interval` takes a value: `event_interval = 1`"
        );
        assert_eq!(
            error(quote!(start_paused = 1)),
            "`start_paused` takes `true` or `false`"
        );
        // A count: 1 is the least.
        assert_eq!(
            error(quote!(max_blocking_threads = 0)),
            "`max_blocking_threads` must be at least 1"
        );
        assert!(Args::parse(quote!(max_blocking_threads = 1)).is_ok());
        assert!(Args::parse(quote!(start_paused = false)).is_ok());
    }
}
