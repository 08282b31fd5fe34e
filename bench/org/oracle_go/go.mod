module orgoracle

go 1.19
