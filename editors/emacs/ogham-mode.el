;;; ogham-mode.el --- Major mode for the Ogham array language -*- lexical-binding: t; -*-

;; Keywords: languages
;; URL: editors/emacs in the Ogham repository
;; Package-Requires: ((emacs "25.1"))

;;; Commentary:

;; Syntax highlighting and comment handling for Ogham source files (`*.og'):
;; keywords, primitive types, numeric literals with their type suffixes, `--' comments and
;; `-- |' doc comments, attributes such as `#[unsafe]', type parameters (`'t') and qualified
;; names (`f32.sqrt').  The keyword lists follow the compiler's lexer
;; (compiler/src/syntax/lexer.rs); tests/cli/editors.rs checks them against it.
;;
;; Install: put this file on the `load-path' and add (require 'ogham-mode) to your init file.
;; `M-x eglot' in an Ogham buffer starts the language server, `ogham lsp'.

;;; Code:

(defconst ogham-declaration-keywords '("def" "entry" "type")
  "Ogham keywords that start a declaration.")

(defconst ogham-keywords
  '("let" "in" "if" "then" "else" "loop" "for" "while" "do" "with" "assert" "import")
  "Other Ogham keywords.")

(defconst ogham-constants '("true" "false" "nan" "inf")
  "Ogham literals written as words.")

(defconst ogham-types '("bool" "i8" "i16" "i32" "i64" "u8" "f32" "f64")
  "Ogham's primitive types.")

(defconst ogham--ident "[a-zA-Z_][a-zA-Z0-9_']*"
  "The regular expression of an Ogham identifier.")

(defconst ogham--suffix "\\(?:i8\\|i16\\|i32\\|i64\\|u8\\|f32\\|f64\\)?"
  "An optional type suffix of a numeric literal.")

(defvar ogham-font-lock-keywords
  `(;; `-- |' as the first thing on a line: a doc comment (over the comment face).
    ("^[ \t]*--[ \t]*|.*$" 0 font-lock-doc-face t)
    ("#\\[[^]\n]*\\]" . font-lock-preprocessor-face)
    (,(concat "\\_<\\(def\\|entry\\)[ \t]+\\(" ogham--ident "\\)")
     (1 font-lock-keyword-face) (2 font-lock-function-name-face))
    (,(concat "\\_<\\(type\\)[ \t]+\\(" ogham--ident "\\)")
     (1 font-lock-keyword-face) (2 font-lock-type-face))
    (,(regexp-opt (append ogham-declaration-keywords ogham-keywords) 'symbols)
     . font-lock-keyword-face)
    (,(regexp-opt ogham-constants 'symbols) . font-lock-constant-face)
    (,(concat "\\_<" (regexp-opt ogham-types) "\\.\\(" ogham--ident "\\)")
     (1 font-lock-builtin-face))
    (,(regexp-opt ogham-types 'symbols) . font-lock-type-face)
    (,(concat "\\_<'" ogham--ident) . font-lock-variable-name-face)
    (,(concat "\\_<\\(?:0[xX][0-9a-fA-F][0-9a-fA-F_]*\\|0[bB][01][01_]*"
              "\\|[0-9][0-9_]*\\(?:\\.[0-9][0-9_]*\\)?\\(?:[eE][+-]?[0-9][0-9_]*\\)?\\)"
              ogham--suffix "\\_>")
     . font-lock-constant-face))
  "Font-lock rules for `ogham-mode'.")

(defvar ogham-mode-syntax-table
  (let ((table (make-syntax-table)))
    ;; `--' starts a comment that ends at the end of the line; a single `-' is an operator.
    (modify-syntax-entry ?- ". 12" table)
    (modify-syntax-entry ?\n ">" table)
    ;; Primes belong to identifiers (`x'', `'t'); `_' too.
    (modify-syntax-entry ?' "_" table)
    (modify-syntax-entry ?_ "_" table)
    ;; `\' is the lambda, not an escape character.
    (modify-syntax-entry ?\\ "." table)
    (dolist (c '(?+ ?* ?/ ?% ?< ?> ?= ?& ?| ?^ ?! ?: ?# ?.))
      (modify-syntax-entry c "." table))
    table)
  "Syntax table for `ogham-mode'.")

;;;###autoload
(define-derived-mode ogham-mode prog-mode "Ogham"
  "Major mode for editing Ogham programs (`.og' files)."
  :syntax-table ogham-mode-syntax-table
  (setq-local comment-start "-- ")
  (setq-local comment-end "")
  (setq-local comment-start-skip "--+[ \t]*")
  (setq-local font-lock-defaults '(ogham-font-lock-keywords)))

;;;###autoload
(add-to-list 'auto-mode-alist '("\\.og\\'" . ogham-mode))

;; The language server: `M-x eglot' (built into Emacs 29, a package before) in an Ogham
;; buffer starts `ogham lsp'.
(defvar eglot-server-programs)
;;;###autoload
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs '(ogham-mode "ogham" "lsp")))

(provide 'ogham-mode)

;;; ogham-mode.el ends here
