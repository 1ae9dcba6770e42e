module github.com/ibtool/ibtool/examples

go 1.26.8

require github.com/ibtool/ibtool v0.0.0

require golang.org/x/sys v0.49.0 // indirect

replace github.com/ibtool/ibtool => ../
