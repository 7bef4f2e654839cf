//! The `ogham` command-line tool. TODO(CLI helper).

fn main() {
    println!("ogham");
}
