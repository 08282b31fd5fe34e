module graphoracle

go 1.19
