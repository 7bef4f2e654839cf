//! The IR printer: every construct, stable text.

mod ir_build;

use ir_build::*;
use ogham_ir::parse::parse_program;
use ogham_ir::print::{print_const, print_program};
use ogham_ir::types::PrimType;
use ogham_ir::{Const, DimIndex, Exp, Form, Program};

#[test]
fn prints_core_ir() {
    let expected = r"entry main [n_0] (xs_1: [n_0]f32) : ([n_0]f32, f32) =
  let ys_4: [n_0]f32 = map n_0 (xs_1) \(x_2: f32) : f32 -> {
    let y_3: f32 = x_2 + 1.0f32
    in y_3
  }
  let sum_8: f32 = redomap n_0 (ys_4)
    reduce_comm \(a_5: f32, c_6: f32) : f32 -> {
      let s_7: f32 = a_5 + c_6
      in s_7
    } (0.0f32)
    map \(x_15: f32) : f32 -> x_15
  let r_12: f32 = loop (acc_9: f32 = sum_8) for i_10 < 3i64 do {
    let acc_11: f32 = f32.sqrt(acc_9)
    in acc_11
  }
  let big_13: bool = r_12 > 10000000000.0f32
  let out_16: f32 = if big_13 : f32 then {
    in r_12
  } else {
    let z_14: f32 = -r_12
    in z_14
  }
  in (ys_4, out_16)
";
    assert_eq!(print_program(&sample_core()), expected);
}

#[test]
fn printing_is_deterministic() {
    assert_eq!(print_program(&sample_core()), print_program(&sample_core()));
}

#[test]
fn constants_print_exactly() {
    assert_eq!(print_const(Const::F32(0.1)), "0.1f32");
    assert_eq!(print_const(Const::F64(0.1)), "0.1f64");
    assert_eq!(print_const(Const::F32(-0.0)), "-0.0f32");
    assert_eq!(print_const(Const::F64(1e-300)), "1e-300f64");
    assert_eq!(print_const(Const::F32(f32::NAN)), "f32.nan");
    assert_eq!(print_const(Const::F64(f64::NEG_INFINITY)), "-f64.inf");
    assert_eq!(print_const(Const::I8(-128)), "-128i8");
    assert_eq!(print_const(Const::U8(255)), "255u8");
    assert_eq!(print_const(Const::Bool(true)), "true");
    // The printed digits parse back to the same bits.
    for x in [0.1f32, 1.0 / 3.0, f32::MIN_POSITIVE, f32::MAX, 16_777_217.0] {
        let text = print_const(Const::F32(x));
        let parsed: f32 = text.trim_end_matches("f32").parse().unwrap();
        assert_eq!(parsed.to_bits(), x.to_bits(), "{text}");
    }
}

/// A function with every array construct.
fn arrays() -> Program {
    let mut b = FnBuilder::new("arrays");
    let n = b.var("n", I64);
    let m = b.var("m", I64);
    let xss = b.unique_param("xss", arr(PrimType::I32, &[v(n), v(m)]));
    let row = b.var("row", arr(PrimType::I32, &[v(m)]));
    let t = b.var("t", arr(PrimType::I32, &[v(m), v(n)]));
    let flat = b.var("flat", arr(PrimType::I32, &[i64c(6)]));
    let lit = b.var("lit", arr(PrimType::I32, &[i64c(2)]));
    let both = b.var("both", arr(PrimType::I32, &[i64c(8)]));
    let upd = b.var("upd", arr(PrimType::I32, &[v(n), v(m)]));
    let cp = b.var("cp", arr(PrimType::I32, &[i64c(8)]));
    let io = b.var("io", arr(PrimType::I64, &[v(n)]));
    let rep = b.var("rep", arr(PrimType::F64, &[i64c(4)]));
    let conv = b.var("conv", F64);
    let slice = b.var("slice", arr(PrimType::I32, &[i64c(2)]));
    b.program(body(
        vec![
            stmt(&[row], Exp::Index(xss, vec![DimIndex::Fix(i64c(0))])),
            stmt(&[t], Exp::Rearrange(xss, vec![1, 0])),
            stmt(&[flat], Exp::Reshape(t, vec![i64c(6)])),
            stmt(&[lit], Exp::ArrayLit(vec![i32c(1), i32c(-2)], I32)),
            stmt(&[both], Exp::Concat(vec![flat, lit])),
            stmt(
                &[slice],
                Exp::Index(
                    both,
                    vec![DimIndex::Slice {
                        start: i64c(7),
                        len: i64c(2),
                        stride: i64c(-1),
                    }],
                ),
            ),
            stmt(&[cp], Exp::Copy(both)),
            stmt(
                &[upd],
                Exp::Update(
                    xss,
                    vec![DimIndex::Fix(i64c(1)), DimIndex::Fix(i64c(2))],
                    i32c(5),
                ),
            ),
            stmt(&[io], Exp::Iota(v(n))),
            stmt(&[conv], Exp::Convert(PrimType::F64, i32c(3))),
            stmt(&[rep], Exp::Replicate(i64c(4), v(conv))),
            stmt(
                &[],
                Exp::Assert {
                    cond: boolc(true),
                    message: "size \"n\"".to_string(),
                    kind: ogham_ir::AssertKind::Size,
                },
            ),
        ],
        &[v(upd), v(cp), v(io), v(rep), v(slice), v(row)],
    ))
}

#[test]
fn prints_array_constructs() {
    let expected = r#"entry arrays [n_0, m_1] (*xss_2: [n_0][m_1]i32) : ([n_0][m_1]i32, [8i64]i32, [n_0]i64, [4i64]f64, [2i64]i32, [m_1]i32) =
  let row_3: [m_1]i32 = xss_2[0i64]
  let t_4: [m_1][n_0]i32 = rearrange((1, 0), xss_2)
  let flat_5: [6i64]i32 = reshape((6i64), t_4)
  let lit_6: [2i64]i32 = [1i32, -2i32] : i32
  let both_7: [8i64]i32 = concat(flat_5, lit_6)
  let slice_13: [2i64]i32 = both_7[7i64:+2i64*-1i64]
  let cp_9: [8i64]i32 = copy(both_7)
  let upd_8: [n_0][m_1]i32 = xss_2 with [1i64, 2i64] = 5i32
  let io_10: [n_0]i64 = iota(n_0)
  let conv_12: f64 = f64.i32(3i32)
  let rep_11: [4i64]f64 = replicate(4i64, conv_12)
  let () = assert(true, "size \"n\"")
  in (upd_8, cp_9, io_10, rep_11, slice_13, row_3)
"#;
    assert_eq!(print_program(&arrays()), expected);
}

#[test]
fn prints_kernel_ir() {
    let expected = r"threshold suff_outer_par_0 = 32768 -- sum: one thread per element

entry k [n_0] (xs_1: [n_0]f32) : (f32, [n_0]f32, [4i64]f32) =
  let suff_3: bool = threshold(suff_outer_par_0, n_0)
  let total_4: f32 = if suff_3 : f32 then {
    in 0.0f32
  } else {
    in 1.0f32
  }
  let scanned_5: [n_0]f32 = segscan block (gtid_2 < n_0) : f32
    scan \(a_9: f32, c_10: f32) : f32 -> {
      let s_11: f32 = a_9 + c_10
      in s_11
    } (0.0f32)
    do {
      in 2.5f32
    }
  let zeros_6: [4i64]f32 = replicate(4i64, 0.0f32)
  let hist_7: [4i64]f32 = seghist thread (bin_8 < n_0) : (i64, f32)
    hist into (zeros_6) bins 4i64 \(a_12: f32, c_13: f32) : f32 -> {
      let s_14: f32 = a_12 + c_13
      in s_14
    } (0.0f32)
    do {
      in (bin_8, 1.0f32)
    }
  in (total_4, scanned_5, hist_7)
";
    assert_eq!(print_program(&sample_kernel()), expected);
}

#[test]
fn prints_scatter_and_hist() {
    let expected = r"entry s [m_1, n_0] (*dst_2: [m_1]f32, is_3: [n_0]i64, vs_4: [n_0]f32) : [m_1]f32 =
  let out_7: [m_1]f32 = scatter n_0 (is_3, vs_4) into (dst_2) \(i_5: i64, x_6: f32) : (i64, f32) -> (i_5, x_6)
  in out_7
";
    assert_eq!(print_program(&sample_scatter(2, false)), expected);
    let expected = r"entry h [k_1, n_0] (*dst_2: [k_1]i32, is_3: [n_0]i64) : [k_1]i32 =
  let out_8: [k_1]i32 = hist n_0 (is_3)
    hist into (dst_2) bins k_1 \(a_5: i32, c_6: i32) : i32 -> {
      let s_7: i32 = a_5 + c_6
      in s_7
    } (0i32)
    map \(i_4: i64) : (i64, i32) -> (i_4, 1i32)
  in out_8
";
    assert_eq!(print_program(&sample_hist(i32c(0))), expected);
}

/// Every hand-built program prints, parses back to the same statements and parameters, and
/// prints identically (`ir::parse`).
#[test]
fn printed_programs_parse_back() {
    for program in [
        sample_core(),
        sample_scatter(2, false),
        sample_hist(i32c(0)),
        arrays(),
    ] {
        parses_back(&program);
    }
    for program in [sample_kernel(), sample_segred(F32)] {
        parses_back(&program);
    }
}

/// `program` prints, parses back (in its form) to the same statements and parameters, and
/// prints identically.
fn parses_back<H: Form>(program: &Program<H>) {
    let text = print_program(program);
    let parsed: Program<H> = parse_program(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(print_program(&parsed), text);
    assert_eq!(parsed.thresholds, program.thresholds);
    for (f, g) in program.functions.iter().zip(&parsed.functions) {
        assert_eq!(f.body, g.body, "{text}");
        assert_eq!(f.params, g.params);
        for (i, info) in g.vars.iter().enumerate() {
            if !info.name.is_empty() {
                assert_eq!(f.vars[i].ty, info.ty);
            }
        }
    }
}
