package mad

//go:generate go run ./internal/attrgen attributes.tbl attrs_gen.go
