// Package sumtree fixes the order in which the parts of a sum are added,
// so that floating-point sums do not depend on how the parts were spread
// over machines or in which order they arrived.
//
// The parts are the leaves 0..n-1 of one binary tree. Node (l, j) covers
// the leaves [j·2ˡ, (j+1)·2ˡ) that exist; its value is its left child's
// (l-1, 2j) plus its right child's (l-1, 2j+1), added in that order, or
// the left child's alone when the right one covers no leaf. The tree's
// shape depends on n alone, so every way of combining the leaves that
// follows it (a runner grouping two children per key, a merge of files
// that each hold one node) computes the same bits. Forest does this for
// values arriving in any order.
package sumtree
