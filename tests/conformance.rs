//! The conformance runner: every case of `conformance/<dialect>/`, whole and under
//! the split schedule, checked for S2, S4 and S8 (see `idiolect::conformance`).

use std::path::Path;

use libtest_mimic::{Arguments, Trial};

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let trials = match idiolect::conformance::load(&root, None) {
        Err(e) => vec![Trial::test("corpus", move || Err(e.into()))],
        Ok(cases) => cases
            .into_iter()
            .map(|case| match case {
                Ok(case) => Trial::test(case.id(), move || {
                    idiolect::conformance::check(&case).map_err(Into::into)
                }),
                Err(e) => Trial::test(e.id, move || Err(e.message.into())),
            })
            .collect(),
    };
    libtest_mimic::run(&args, trials).exit();
}
