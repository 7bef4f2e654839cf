;;; eglot-check.el --- `ogham lsp' through Emacs' Eglot -*- lexical-binding: t -*-

;; Run by scripts/editor-check as
;;   emacs --batch -l ~/.emacs.d/init.el -l scripts/editors/eglot-check.el
;; in the directory of the sample file, after init.el (the `elisp' blocks of docs/editors.md)
;; loaded `ogham-mode' and hooked `eglot-ensure' to it.  Visits the sample, lets Eglot connect
;; (it does so after the first command, which batch mode never runs: the hook is run by hand),
;; then checks through Eglot's own functions: Flymake's diagnostic, the hover request, the
;; completion table of `completion-at-point', `eglot-format-buffer' and `xref-find-definitions'.
;; Prints one line per check; exits non-zero on a failure.

(require 'eglot)
(require 'xref)

(defvar eglot-check-failures 0)
(defvar eglot-check-started (float-time))

(defun eglot-check-say (text)
  (princ (format "eglot: %s\n" text)))

(defun eglot-check (ok what &optional detail)
  (if ok
      (eglot-check-say (concat "ok   " what))
    (setq eglot-check-failures (1+ eglot-check-failures))
    (eglot-check-say (format "FAIL %s: %S" what detail))))

(defun eglot-check-wait (predicate)
  "Waits up to 30 s for PREDICATE, serving the server's messages meanwhile."
  (let ((deadline (+ (float-time) 30)) value)
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    value))

(defun eglot-check-goto (text)
  "Puts point at the start of the first TEXT in the buffer."
  (goto-char (point-min))
  (search-forward text)
  (goto-char (match-beginning 0)))

(find-file "sample.og")
(eglot-check (eq major-mode 'ogham-mode) "`ogham-mode' for sample.og" major-mode)
(run-hooks 'post-command-hook)
(eglot-check (eglot-check-wait #'eglot-current-server) "Eglot started `ogham lsp'")

;; Diagnostics: Flymake's, with the code, the range and the message.
(let* ((diag (car (eglot-check-wait (lambda () (flymake-diagnostics)))))
       (text (and diag (flymake-diagnostic-text diag))))
  (eglot-check-say (format "first diagnostic after %d ms"
                           (* 1000 (- (float-time) eglot-check-started))))
  (eglot-check-goto "x + y")
  (forward-char 4)
  (eglot-check (and diag (string-match-p "\\[E0204\\]: cannot find `y`" text)
                    (= (flymake-diagnostic-beg diag) (point))
                    (= (flymake-diagnostic-end diag) (1+ (point))))
               "diagnostic E0204 on `y`" (and diag (list text (flymake-diagnostic-beg diag)))))

;; Hover on a library function, asked as Eglot asks it.
(eglot-check-goto "nanmedian xs")
(let* ((hover (jsonrpc-request (eglot--current-server-or-lose) :textDocument/hover
                               (eglot--TextDocumentPositionParams)))
       (contents (plist-get hover :contents))
       (text (if (stringp contents) contents (plist-get contents :value))))
  (eglot-check-say (format "hover answered after %d ms"
                           (* 1000 (- (float-time) eglot-check-started))))
  (eglot-check (and text
                    (string-search "def nanmedian ('t: float) [n] (xs: [n]t) : t" text)
                    (string-search "The median of the valid" text))
               "hover on `nanmedian`: signature and doc comment" text))

;; Completion: the table `completion-at-point' would use.
(eglot-check-goto "nanmedian xs")
(forward-char 4)
(let* ((capf (eglot-completion-at-point))
       (names (all-completions "" (nth 2 capf))))
  (eglot-check (and (member "nanmedian" names) (member "argsort" names)
                    (member "tw_distance" names))
               "completion offers `nanmedian', `argsort' and `tw_distance' (lib/dtw, not imported)"
               (length names)))

;; Formatting.  (Eglot tells the server about the edit from an idle timer, which batch mode never
;; runs: it is called by hand.)
(eglot-format-buffer)
(eglot--signal-textDocument/didChange)
(eglot-check (progn (goto-char (point-min))
                    (search-forward
                     "def row_medians [m][n] (xs: [m][n]f32) : [m]f32 = map nanmedian xs\n" nil t))
             "formatting joined `row_medians' onto one line" (buffer-string))

;; Go to definition, into the standard library.
(eglot-check-goto "nanmedian xs")
(let ((from (current-buffer)))
  (xref-find-definitions (xref-backend-identifier-at-point (xref-find-backend)))
  (eglot-check (and (not (eq from (current-buffer)))
                    (string-match-p "lib/stats\\.og\\'" (or buffer-file-name ""))
                    (looking-at "nanmedian")
                    (save-excursion (beginning-of-line) (looking-at "def nanmedian")))
               "definition of `nanmedian' opens lib/stats.og at its `def'"
               (list buffer-file-name (line-number-at-pos))))

(eglot-check-say (if (= eglot-check-failures 0) "all checks passed"
                   (format "%d checks failed" eglot-check-failures)))
(kill-emacs (if (= eglot-check-failures 0) 0 1))
