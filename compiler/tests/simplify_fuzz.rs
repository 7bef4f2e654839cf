//! Property test: simplification preserves the results of random programs, evaluated by a
//! small reference evaluator built on the executors' scalar semantics (`ir::scalar`). The
//! programs mix integer, float and
//! boolean arithmetic on interesting constants, conversions, nested `if`s, `for` loops, maps
//! and map-reductions, and small arrays (`iota`, `replicate`, indexing in and out of bounds,
//! in-place updates).
//! Programs whose evaluation fails (division by zero, an index out of bounds) are skipped: dead
//! code's errors may disappear. 5,000 cases when `CI` is set, 300 otherwise.

mod ir_build;

use ir_build::*;
use ogham_compiler::opt::simplify::simplify;
use ogham_ir::op::{BinOp, UnOp};
use ogham_ir::scalar;
use ogham_ir::types::PrimType;
use ogham_ir::verify::verify;
use ogham_ir::{
    Body, Const, DimIndex, Exp, Function, LoopForm, Program, RedOp, Soac, Stmt, SubExp, Type, VarId,
};
use proptest::prelude::*;
use std::collections::HashMap;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if std::env::var_os("CI").is_some() {
            5_000
        } else {
            300
        },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A deterministic generator of choices from a seed (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

/// The length of every generated array.
const LEN: i64 = 3;
const INTS: &[i32] = &[0, 1, -1, 2, 7, -7, i32::MAX, i32::MIN];
const FLOATS: &[f32] = &[0.0, -0.0, 1.0, -1.0, 0.5, 3.0, f32::INFINITY];
const INT_OPS: &[BinOp] = &[
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Mod,
    BinOp::Quot,
    BinOp::Rem,
    BinOp::Pow,
    BinOp::BitAnd,
    BinOp::BitOr,
    BinOp::BitXor,
    BinOp::Shl,
    BinOp::Shr,
    BinOp::Lt,
    BinOp::Eq,
    BinOp::Ge,
];
const FLOAT_OPS: &[BinOp] = &[
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Mod,
    BinOp::Lt,
    BinOp::Eq,
    BinOp::Ne,
];
const BOOL_OPS: &[BinOp] = &[
    BinOp::BitAnd,
    BinOp::BitOr,
    BinOp::BitXor,
    BinOp::Eq,
    BinOp::Lt,
];

const I64_OPS: &[BinOp] = &[BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Lt];
const INDICES: &[i64] = &[0, 1, 2, 3, -1];
const SCALARS: &[PrimType] = &[PrimType::I32, PrimType::F32, PrimType::Bool, PrimType::I64];

struct Gen {
    rng: Rng,
    b: FnBuilder,
    /// Variables in scope with their types.
    scope: Vec<(VarId, Type)>,
    /// Where the innermost body's variables start in `scope` (only those may be consumed).
    body_start: usize,
}

fn array_of(elem: PrimType) -> Type {
    arr(elem, &[SubExp::i64(LEN)])
}

impl Gen {
    fn vars_of(&self, ty: &Type, from: usize) -> Vec<VarId> {
        self.scope[from..]
            .iter()
            .filter(|(_, t)| t == ty)
            .map(|(v, _)| *v)
            .collect()
    }

    fn operand(&mut self, ty: PrimType) -> SubExp {
        let vars = self.vars_of(&Type::Prim(ty), 0);
        if !vars.is_empty() && self.rng.below(3) > 0 {
            return SubExp::Var(self.rng.pick(&vars));
        }
        SubExp::Const(match ty {
            PrimType::I32 => Const::I32(self.rng.pick(INTS)),
            PrimType::F32 => Const::F32(self.rng.pick(FLOATS)),
            PrimType::I64 => Const::I64(self.rng.pick(INDICES)),
            _ => Const::Bool(self.rng.below(2) == 0),
        })
    }

    /// Binds a new variable of type `ty` to `exp`.
    fn bind(&mut self, ty: Type, exp: Exp) -> Stmt {
        let v = self.b.var("v", ty.clone());
        self.scope.push((v, ty));
        stmt(&[v], exp)
    }

    /// A statement binding one new variable (added to the scope).
    fn stmt(&mut self, depth: usize) -> Stmt {
        let ty = self.rng.pick(SCALARS);
        let elem = self
            .rng
            .pick(&[PrimType::I32, PrimType::F32, PrimType::I64]);
        match self.rng.below(14) {
            0 if depth < 2 => {
                let cond = self.operand(PrimType::Bool);
                let then_body = self.body(ty, depth + 1);
                let else_body = self.body(ty, depth + 1);
                let ret = vec![Type::Prim(ty)];
                let exp = Exp::If {
                    cond,
                    then_body,
                    else_body,
                    ret,
                };
                self.bind(Type::Prim(ty), exp)
            }
            1 | 2 if depth < 2 => self.loop_(ty, depth + 1),
            10 | 11 if depth < 2 => self.map(ty, depth + 1),
            3 => {
                let op = if ty == PrimType::Bool {
                    UnOp::Not
                } else {
                    UnOp::Neg
                };
                let a = self.operand(ty);
                self.bind(Type::Prim(ty), Exp::UnOp(op, a))
            }
            4 if ty != PrimType::Bool => {
                let a = self.operand(ty);
                self.bind(Type::Prim(elem), Exp::Convert(elem, a))
            }
            5 => self.bind(array_of(PrimType::I64), Exp::Iota(SubExp::i64(LEN))),
            6 => {
                let x = self.operand(elem);
                self.bind(array_of(elem), Exp::Replicate(SubExp::i64(LEN), x))
            }
            7 | 8 => {
                let arrays = self.vars_of(&array_of(elem), 0);
                if arrays.is_empty() {
                    return self.binop(ty);
                }
                let a = self.rng.pick(&arrays);
                let i = self.operand(PrimType::I64);
                self.bind(Type::Prim(elem), Exp::Index(a, vec![DimIndex::Fix(i)]))
            }
            9 => {
                let arrays = self.vars_of(&array_of(elem), self.body_start);
                if arrays.is_empty() {
                    return self.binop(ty);
                }
                let a = self.rng.pick(&arrays);
                let (i, x) = (self.operand(PrimType::I64), self.operand(elem));
                self.scope.retain(|&(v, _)| v != a);
                self.bind(array_of(elem), Exp::Update(a, vec![DimIndex::Fix(i)], x))
            }
            _ => self.binop(ty),
        }
    }

    fn binop(&mut self, ty: PrimType) -> Stmt {
        let ops = match ty {
            PrimType::I32 => INT_OPS,
            PrimType::F32 => FLOAT_OPS,
            PrimType::I64 => I64_OPS,
            _ => BOOL_OPS,
        };
        let op = self.rng.pick(ops);
        let comparison = matches!(op, BinOp::Lt | BinOp::Eq | BinOp::Ne | BinOp::Ge);
        let (a, b) = (self.operand(ty), self.operand(ty));
        let result = if comparison { PrimType::Bool } else { ty };
        self.bind(Type::Prim(result), Exp::BinOp(op, a, b))
    }

    /// `loop (acc.. = init..) for i < k do body` with one or two parameters (`k` is 0, 1 or
    /// 3), binding a new variable per parameter.
    fn loop_(&mut self, ty: PrimType, depth: usize) -> Stmt {
        let types = [ty, self.rng.pick(SCALARS)];
        let count = 1 + self.rng.below(2);
        let types = &types[..count];
        let inits: Vec<SubExp> = types.iter().map(|&t| self.operand(t)).collect();
        let accs: Vec<VarId> = types
            .iter()
            .map(|&t| self.b.var("acc", Type::Prim(t)))
            .collect();
        let index = self.b.var("i", I64);
        let bound_vars: Vec<VarId> = accs.iter().copied().chain([index]).collect();
        let body = self.lambda_body(&bound_vars, types, depth);
        let exp = Exp::Loop {
            params: accs.into_iter().zip(inits).collect(),
            form: LoopForm::For {
                index,
                bound: SubExp::i64(self.rng.pick(&[0, 1, LEN])),
            },
            body,
        };
        let pat: Vec<VarId> = types
            .iter()
            .map(|&t| {
                let v = self.b.var("l", Type::Prim(t));
                self.scope.push((v, Type::Prim(t)));
                v
            })
            .collect();
        stmt(&pat, exp)
    }

    /// A body of a few statements returning a value of type `ty`.
    fn body(&mut self, ty: PrimType, depth: usize) -> Body {
        self.lambda_body(&[], &[ty], depth)
    }

    /// A body of a few statements in the scope of `params`, returning values of the types
    /// `results`.
    fn lambda_body(&mut self, params: &[VarId], results: &[PrimType], depth: usize) -> Body {
        let (mark, outer_start) = (self.scope.len(), self.body_start);
        for &p in params {
            let ty = self.b.f.var(p).ty.clone();
            self.scope.push((p, ty));
        }
        self.body_start = self.scope.len();
        let n = 1 + self.rng.below(4);
        let stmts: Vec<Stmt> = (0..n).map(|_| self.stmt(depth)).collect();
        let result: Vec<SubExp> = results.iter().map(|&t| self.operand(t)).collect();
        // Arrays consumed here are gone for good; those bound here go out of scope.
        self.scope.truncate(mark);
        self.body_start = outer_start;
        body(stmts, &result)
    }

    /// A map over one or two arrays with two results, or a map-reduce (`+` on `i32`) with
    /// one reduced and one mapped result.
    fn map(&mut self, ty: PrimType, depth: usize) -> Stmt {
        let arrays: Vec<(VarId, Type)> = self
            .scope
            .iter()
            .filter(|(_, t)| t.rank() == 1)
            .cloned()
            .collect();
        if arrays.is_empty() {
            return self.binop(ty);
        }
        let inputs: Vec<(VarId, Type)> = (0..1 + self.rng.below(2))
            .map(|_| arrays[self.rng.below(arrays.len())].clone())
            .collect();
        let params: Vec<VarId> = inputs
            .iter()
            .map(|(_, t)| self.b.var("x", t.row()))
            .collect();
        let reduce = self.rng.below(2) == 0;
        let second = self.rng.pick(SCALARS);
        let results = if reduce {
            [PrimType::I32, ty]
        } else {
            [ty, second]
        };
        let lambda_body = self.lambda_body(&params, &results, depth);
        let map = lambda(&params, lambda_body, &results.map(Type::Prim));
        let reds = if reduce {
            let (a, c, s) = (
                self.b.var("a", I32),
                self.b.var("c", I32),
                self.b.var("s", I32),
            );
            let add = Exp::BinOp(BinOp::Add, SubExp::Var(a), SubExp::Var(c));
            vec![RedOp {
                lambda: lambda(
                    &[a, c],
                    body(vec![stmt(&[s], add)], &[SubExp::Var(s)]),
                    &[I32],
                ),
                neutral: vec![SubExp::Const(Const::I32(0))],
                commutative: true,
            }]
        } else {
            vec![]
        };
        let exp = Exp::Soac(Soac::Screma {
            width: SubExp::i64(LEN),
            inputs: inputs.iter().map(|(v, _)| *v).collect(),
            map,
            scans: vec![],
            reds,
        });
        let types = if reduce {
            vec![I32, array_of(ty)]
        } else {
            vec![array_of(ty), array_of(second)]
        };
        let pat: Vec<VarId> = types
            .into_iter()
            .map(|t| {
                let v = self.b.var("m", t.clone());
                self.scope.push((v, t));
                v
            })
            .collect();
        stmt(&pat, exp)
    }
}

/// A random program of scalar parameters returning every top-level variable.
fn program(seed: u64) -> Program {
    let mut g = Gen {
        rng: Rng(seed | 1),
        b: FnBuilder::new("main"),
        scope: Vec::new(),
        body_start: 0,
    };
    for ty in [
        PrimType::I32,
        PrimType::I32,
        PrimType::F32,
        PrimType::Bool,
        PrimType::I64,
    ] {
        let p = g.b.param("p", Type::Prim(ty));
        g.scope.push((p, Type::Prim(ty)));
    }
    let n = 3 + g.rng.below(12);
    let stmts: Vec<Stmt> = (0..n).map(|_| g.stmt(0)).collect();
    let result: Vec<SubExp> = g.scope.iter().map(|&(v, _)| SubExp::Var(v)).collect();
    g.b.program(body(stmts, &result))
}

#[derive(Clone, Debug, PartialEq)]
enum Value {
    Scalar(Const),
    Array(Vec<Const>),
}

type Env = HashMap<VarId, Value>;

fn scalar(env: &Env, se: SubExp) -> Const {
    match se {
        SubExp::Const(c) => c,
        SubExp::Var(v) => match &env[&v] {
            Value::Scalar(c) => *c,
            Value::Array(_) => unreachable!("a scalar operand"),
        },
    }
}

fn value(env: &Env, se: SubExp) -> Value {
    match se {
        SubExp::Const(c) => Value::Scalar(c),
        SubExp::Var(v) => env[&v].clone(),
    }
}

/// The position `i` of an array of length `LEN`, if in bounds.
fn position(env: &Env, idx: &[DimIndex]) -> Option<usize> {
    let [DimIndex::Fix(i)] = idx else {
        unreachable!("one index")
    };
    let Const::I64(i) = scalar(env, *i) else {
        unreachable!("an i64 index")
    };
    (0..LEN).contains(&i).then_some(i as usize)
}

fn array(env: &Env, a: VarId) -> Vec<Const> {
    match &env[&a] {
        Value::Array(xs) => xs.clone(),
        Value::Scalar(_) => unreachable!("an array"),
    }
}

/// Evaluates a body; `None` if an operation fails.
fn eval(body: &Body, env: &mut Env) -> Option<Vec<Value>> {
    for s in &body.stmts {
        let values = match &s.exp {
            Exp::SubExp(a) => vec![value(env, *a)],
            Exp::BinOp(op, a, b) => {
                let r = scalar::binop(*op, scalar(env, *a), scalar(env, *b)).ok()?;
                vec![Value::Scalar(r)]
            }
            Exp::UnOp(op, a) => vec![Value::Scalar(scalar::unop(*op, scalar(env, *a)).ok()?)],
            Exp::Convert(to, a) => vec![Value::Scalar(scalar::convert(scalar(env, *a), *to))],
            Exp::Iota(_) => vec![Value::Array((0..LEN).map(Const::I64).collect())],
            Exp::Replicate(_, x) => vec![Value::Array(vec![scalar(env, *x); LEN as usize])],
            Exp::Index(a, idx) => {
                let i = position(env, idx)?;
                vec![Value::Scalar(array(env, *a)[i])]
            }
            Exp::Update(a, idx, x) => {
                let i = position(env, idx)?;
                let mut xs = array(env, *a);
                xs[i] = scalar(env, *x);
                vec![Value::Array(xs)]
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                let taken = if scalar(env, *cond) == Const::Bool(true) {
                    then_body
                } else {
                    else_body
                };
                eval(taken, env)?
            }
            Exp::Loop { params, form, body } => {
                let LoopForm::For { index, bound } = form else {
                    unreachable!("only for loops are generated")
                };
                let mut current: Vec<Value> = params.iter().map(|&(_, i)| value(env, i)).collect();
                let Const::I64(n) = scalar(env, *bound) else {
                    unreachable!("an i64 bound")
                };
                for i in 0..n {
                    env.insert(*index, Value::Scalar(Const::I64(i)));
                    for (&(p, _), c) in params.iter().zip(&current) {
                        env.insert(p, c.clone());
                    }
                    current = eval(body, env)?;
                }
                current
            }
            Exp::Soac(Soac::Screma {
                width,
                inputs,
                map,
                reds,
                ..
            }) => {
                let Const::I64(n) = scalar(env, *width) else {
                    unreachable!("an i64 width")
                };
                let mut accs: Vec<Value> = reds
                    .iter()
                    .flat_map(|r| r.neutral.iter().map(|&ne| value(env, ne)))
                    .collect();
                let mut mapped: Vec<Vec<Const>> = Vec::new();
                for i in 0..n as usize {
                    for (&p, &input) in map.params.iter().zip(inputs) {
                        env.insert(p, Value::Scalar(array(env, input)[i]));
                    }
                    let mut values = eval(&map.body, env)?.into_iter();
                    for (acc, red) in accs.iter_mut().zip(reds) {
                        let x = values.next().expect("a reduced value");
                        env.insert(red.lambda.params[0], acc.clone());
                        env.insert(red.lambda.params[1], x);
                        *acc = eval(&red.lambda.body, env)?.remove(0);
                    }
                    mapped.resize(values.len(), Vec::new());
                    for (column, v) in mapped.iter_mut().zip(values) {
                        let Value::Scalar(c) = v else {
                            unreachable!("scalar map results")
                        };
                        column.push(c);
                    }
                }
                accs.extend(mapped.into_iter().map(Value::Array));
                accs
            }
            other => unreachable!("not generated: {other:?}"),
        };
        for (&v, c) in s.pat.iter().zip(values) {
            env.insert(v, c);
        }
    }
    Some(body.result.iter().map(|&r| value(env, r)).collect())
}

fn run(function: &Function, args: &[Const]) -> Option<Vec<Value>> {
    let mut env: Env = function
        .params
        .iter()
        .map(|p| p.var)
        .zip(args.iter().map(|&c| Value::Scalar(c)))
        .collect();
    eval(&function.body, &mut env)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn simplification_preserves_results(seed in any::<u64>(), a in any::<i32>(), x in any::<f32>()) {
        let original = program(seed);
        prop_assert_eq!(verify(&original), Ok(()));
        let mut simplified = original.clone();
        simplify(&mut simplified);
        prop_assert_eq!(verify(&simplified), Ok(()));
        for args in [
            [Const::I32(a), Const::I32(0), Const::F32(x), Const::Bool(true), Const::I64(1)],
            [Const::I32(-1), Const::I32(a), Const::F32(-0.0), Const::Bool(false), Const::I64(5)],
        ] {
            let Some(expected) = run(&original.functions[0], &args) else { continue };
            let actual = run(&simplified.functions[0], &args);
            prop_assert_eq!(actual, Some(expected.clone()), "seed {}", seed);
        }
    }
}
