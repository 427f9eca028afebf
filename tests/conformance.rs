//! The conformance runner: every case of `conformance/<dialect>/`, whole and under
//! the split schedule, checked for S2, S4 and S8 (see `idiolect::conformance`), and
//! every refused-options case (`<case>.refused.json`).

use std::path::Path;

use libtest_mimic::{Arguments, Trial};

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
    let trials = match idiolect::conformance::load(&root, None) {
        Err(e) => vec![Trial::test("corpus", move || Err(e.into()))],
        Ok(cases) => {
            let missing = idiolect::conformance::dialects_without_cases(&cases);
            let mut trials: Vec<Trial> = cases
                .into_iter()
                .map(|case| match case {
                    Ok(case) => Trial::test(case.id(), move || {
                        idiolect::conformance::check(&case).map_err(Into::into)
                    }),
                    Err(e) => Trial::test(e.id, move || Err(e.message.into())),
                })
                .collect();
            match idiolect::conformance::load_refused(&root, None) {
                Err(e) => trials.push(Trial::test("corpus (refused)", move || Err(e.into()))),
                Ok(refused) => trials.extend(refused.into_iter().map(|case| match case {
                    Ok(case) => Trial::test(case.id(), move || {
                        idiolect::conformance::check_refused(&case).map_err(Into::into)
                    }),
                    Err(e) => Trial::test(e.id, move || Err(e.message.into())),
                })),
            }
            for name in missing {
                trials.push(Trial::test(format!("{name}::(corpus)"), move || {
                    Err(format!("the registered dialect {name} has no conformance cases").into())
                }));
            }
            trials
        }
    };
    libtest_mimic::run(&args, trials).exit();
}
