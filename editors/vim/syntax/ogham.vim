" Vim syntax file
" Language:   Ogham (the data-parallel array language; files *.og)
" Maintainer: the Ogham project (editors/vim in its repository)
"
" The tokens follow the compiler's lexer (compiler/src/syntax/lexer.rs); the keyword lists are
" checked against it by tests/cli/editors.rs.

if exists("b:current_syntax")
  finish
endif

" Identifiers may contain primes (x', acc'').
syn iskeyword @,48-57,_,39

syn keyword oghamDeclaration def entry type
syn keyword oghamInclude     import
syn keyword oghamKeyword     let in if then else loop for while do with assert
syn keyword oghamBoolean     true false
syn keyword oghamFloatConst  nan inf
syn keyword oghamType        bool i8 i16 i32 i64 u8 f32 f64

" f32.sqrt, i64.max: the name after a primitive type's module (the type is a keyword above).
syn match oghamQualified "\v(<(bool|i8|i16|i32|i64|u8|f32|f64)\.)@<=[a-zA-Z_][a-zA-Z0-9_']*"
" 'a, 't: type parameters.
syn match oghamTypeVar "\v'[a-zA-Z_][a-zA-Z0-9_']*"

" Numbers with their type suffixes: 1_000, 2i64, 1.5e3f32, 1e-3, 0x1Fu8, 0b101.
syn match oghamNumber "\v<\d[0-9_]*(i8|i16|i32|i64|u8|f32|f64)?>"
syn match oghamNumber "\v<\d[0-9_]*(\.\d[0-9_]*)?([eE][+-]?\d[0-9_]*)?(f32|f64)?>"
syn match oghamNumber "\v<0[xX]\x[0-9a-fA-F_]*(i8|i16|i32|i64|u8)?>"
syn match oghamNumber "\v<0[bB][01][01_]*(i8|i16|i32|i64|u8|f32|f64)?>"

syn match oghamOperator "\v[-+*/%=!<>&|^\\]+|:\>|\.\."
syn match oghamAttribute "\v#\[[^\]]*\]"
syn region oghamString start=+"+ skip=+\\.+ end=+"+ end=+$+ oneline

syn keyword oghamTodo contained TODO FIXME XXX NOTE
syn match oghamComment "--.*$" contains=oghamTodo,@Spell
" A doc comment: `-- |` as the first thing on a line.
syn match oghamDocComment "^\s*--\s*|.*$" contains=oghamTodo,@Spell

hi def link oghamDeclaration Structure
hi def link oghamInclude     Include
hi def link oghamKeyword     Keyword
hi def link oghamBoolean     Boolean
hi def link oghamFloatConst  Float
hi def link oghamType        Type
hi def link oghamQualified   Function
hi def link oghamTypeVar     Identifier
hi def link oghamNumber      Number
hi def link oghamOperator    Operator
hi def link oghamAttribute   PreProc
hi def link oghamString      String
hi def link oghamTodo        Todo
hi def link oghamComment     Comment
hi def link oghamDocComment  SpecialComment

let b:current_syntax = "ogham"
