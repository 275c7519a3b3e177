//! `#[ioloop::main]` and `#[ioloop::test]`, re-exported by `ioloop`: the
//! two attributes, then the checking of the `async fn` they are on and the
//! writing of the plain `fn` that runs it on a runtime (`Entry`); their
//! `Builder` settings are read in `args.rs`.

#![forbid(unsafe_code)]

mod args;

use proc_macro::TokenStream as Tokens;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{FnArg, ItemFn};

use args::Args;

/// Runs an `async fn main` on a new runtime, through `ioloop::block_on`.
///
/// It becomes a plain `fn`, keeping its attributes, visibility, name and
/// return type; it takes no parameters or generics. Arguments (`Builder`'s):
/// - `event_interval = N`, `events_capacity = N`, `max_blocking_threads = N`;
/// - `start_paused = true` (or `false`): see `ioloop::time::pause`.
///
/// # Panics
///
/// If the OS refuses the runtime its file descriptors, as `block_on` does.
///
/// # Examples
///
/// ```
/// #[ioloop::main(max_blocking_threads = 2)]
/// async fn main() {
///     assert_eq!(ioloop::spawn_blocking(|| 6 * 7).await.unwrap(), 42);
/// }
/// ```
#[proc_macro_attribute]
pub fn main(args: Tokens, item: Tokens) -> Tokens {
    Entry::Main.expand(args.into(), item.into()).into()
}

/// Runs an `async fn` test on a new runtime: a `#[test]` (`#[should_panic]`
/// and `#[ignore]` work), otherwise as [`macro@main`], with its arguments.
///
/// # Panics
///
/// As [`macro@main`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// #[ioloop::test(start_paused = true)]
/// async fn an_hour_passes_at_once() {
///     let start = ioloop::time::Instant::now();
///     ioloop::time::sleep(Duration::from_secs(3600)).await;
///     assert_eq!(start.elapsed(), Duration::from_secs(3600));
/// }
/// # fn main() {}
/// ```
#[proc_macro_attribute]
pub fn test(args: Tokens, item: Tokens) -> Tokens {
    Entry::Test.expand(args.into(), item.into()).into()
}

/// What the attributes refuse: `compile_fail` doctests, kept in `tests/`.
#[cfg(doctest)]
#[doc = include_str!("../tests/compile_fail.md")]
struct CompileFail;

/// Which attribute is expanding.
#[derive(Clone, Copy)]
enum Entry {
    Main,
    Test,
}

impl Entry {
    fn attribute(self) -> &'static str {
        match self {
            Entry::Main => "#[ioloop::main]",
            Entry::Test => "#[ioloop::test]",
        }
    }

    /// The attribute's expansion, or, if its arguments or the function are
    /// not what it takes, the errors at the tokens at fault and a stand-in
    /// (see [`Entry::stand_in`]).
    fn expand(self, args: TokenStream, item: TokenStream) -> TokenStream {
        let function: ItemFn = match syn::parse2(item.clone()) {
            Ok(function) => function,
            Err(err) => {
                let message = format!("{} goes on an `async fn`: {err}", self.attribute());
                let mut tokens = syn::Error::new(err.span(), message).to_compile_error();
                item.to_tokens(&mut tokens);
                return tokens;
            }
        };
        let args = Args::parse(args);
        let err = match (args, self.check(&function)) {
            (Ok(args), Ok(())) => return self.write(&args, function),
            (Err(mut err), Err(more)) => {
                err.combine(more);
                err
            }
            (Err(err), _) | (_, Err(err)) => err,
        };
        let mut tokens = err.to_compile_error();
        tokens.extend(self.stand_in(function));
        tokens
    }

    /// Refuses what the plain `fn` could not keep: it takes no arguments and
    /// no generics, because neither `main` nor a test has a caller to pass
    /// them; and `#[test]` written beside `#[ioloop::test]`, which adds its
    /// own.
    fn check(self, function: &ItemFn) -> syn::Result<()> {
        let sig = &function.sig;
        let attribute = self.attribute();
        let mut errors = Vec::new();
        if sig.asyncness.is_none() {
            let message = format!("{attribute} runs an `async fn`: add `async` before `fn`");
            errors.push(syn::Error::new(sig.fn_token.span, message));
        }
        if let Some(FnArg::Receiver(receiver)) = sig.inputs.first() {
            let message = format!("{attribute} cannot take `self`: it goes on a free function");
            errors.push(syn::Error::new_spanned(receiver, message));
        } else if !sig.inputs.is_empty() {
            let message = format!("{attribute} takes a function without parameters");
            errors.push(syn::Error::new_spanned(&sig.inputs, message));
        }
        if !sig.generics.params.is_empty() {
            let message = format!("{attribute} takes a function without generics");
            errors.push(syn::Error::new_spanned(&sig.generics, message));
        } else if let Some(clause) = &sig.generics.where_clause {
            let message = format!("{attribute} takes a function without a `where` clause");
            errors.push(syn::Error::new_spanned(clause, message));
        }
        if let Entry::Test = self {
            let doubled = function
                .attrs
                .iter()
                .find(|attr| attr.path().is_ident("test"));
            if let Some(attr) = doubled {
                let message = "#[ioloop::test] adds `#[test]` itself: remove this one";
                errors.push(syn::Error::new_spanned(attr, message));
            }
        }
        let mut errors = errors.into_iter();
        let Some(mut first) = errors.next() else {
            return Ok(());
        };
        first.extend(errors);
        Err(first)
    }

    /// The plain `fn`: the same attributes, visibility, name and return
    /// type, whose body is the `async fn` as written, now an item inside
    /// it, run to completion by `block_on`.
    ///
    /// The body stays in an `async fn` rather than an `async` block so it
    /// means what it meant: its return type is declared, not inferred, so
    /// `return Err(Box::new(e))` still coerces to `Box<dyn Error>` and `?`
    /// converts errors into the declared type. The inner item keeps the
    /// outer one's name, so a recursive call still finds it.
    fn write(self, args: &Args, function: ItemFn) -> TokenStream {
        let ItemFn {
            attrs,
            vis,
            mut sig,
            block,
            ..
        } = function;
        let name = &sig.ident;
        let run = args.block_on(quote! { #name() });
        let inner = quote! { #sig #block };
        sig.asyncness = None;
        let test = match self {
            Entry::Main => None,
            Entry::Test => Some(quote! { #[::core::prelude::v1::test] }),
        };
        quote! {
            #test
            #(#attrs)*
            #vis #sig {
                #inner
                #run
            }
        }
    }

    /// What stands in for a function refused, so that the error is the only
    /// one: a plain `fn` of the same name and attributes (a `#[test]` for
    /// `#[ioloop::test]`) that takes nothing and returns nothing, which no
    /// `main` or test check can fault, holding the function as written as an
    /// item never called, so its body is still checked (and an IDE still
    /// sees it). Leaving the function as it was instead would add "`main`
    /// function is not allowed to be `async`" to every error on `main`.
    fn stand_in(self, function: ItemFn) -> TokenStream {
        let ItemFn {
            attrs,
            vis,
            sig,
            block,
            ..
        } = function;
        let name = &sig.ident;
        let test = match self {
            Entry::Test if !attrs.iter().any(|attr| attr.path().is_ident("test")) => {
                Some(quote! { #[::core::prelude::v1::test] })
            }
            _ => None,
        };
        quote! {
            #test
            #(#attrs)*
            #vis fn #name() {
                #[allow(dead_code)]
                #sig #block
            }
        }
    }
}
