" Ogham source files.
autocmd BufRead,BufNewFile *.og setfiletype ogham
