package linalg

import "fmt"

func potrfErr(info int) error {
	if info > 0 {
		return &NotPositiveDefiniteError{Order: info}
	}
	if info < 0 {
		panic(fmt.Sprintf("linalg: potrf argument %d invalid", -info))
	}
	return nil
}

func trtriErr(info int) error {
	if info > 0 {
		return fmt.Errorf("linalg: triangular matrix is singular (diagonal element %d is zero)", info)
	}
	if info < 0 {
		panic(fmt.Sprintf("linalg: trtri argument %d invalid", -info))
	}
	return nil
}

func checkGemm(name string, tA, tB bool, m, n, k, la, lda, lb, ldb, lc, ldc int) {
	ar, ac := m, k
	if tA {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB {
		br, bc = n, k
	}
	if k > 0 {
		checkRows(name+"(a)", ar, ac, lda, la)
		checkRows(name+"(b)", br, bc, ldb, lb)
	}
	checkRows(name+"(c)", m, n, ldc, lc)
}

func checkSyrk(name string, tA bool, n, k, la, lda, lc, ldc int) {
	ar, ac := n, k
	if tA {
		ar, ac = k, n
	}
	if k > 0 {
		checkRows(name+"(a)", ar, ac, lda, la)
	}
	checkSym(name, n, ldc, lc)
}
