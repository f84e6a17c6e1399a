// Package fetch downloads the paper's backbones and data sets from their
// official locations and verifies them.
//
// The Catalogue names every asset: where it is published, its size, and its
// digest where one is published (torchvision's ResNet-50 files, CIFAR,
// CUB-200-2011, ImageNet-R and ImageNet-A, the PILOT/RanPAC split archives).
// Assets without a published digest (timm's and Google's ViT-B/16 weights)
// are trusted on first use: the SHA-256 of the first download is recorded in
// a lock file beside it (LockName) and later downloads are verified against
// it.
//
// A Client downloads one asset at a time into a folder: it checks the free
// space first, writes to NAME.part in that folder, resumes an interrupted
// download with an HTTP Range request (a server that ignores Range starts
// again from byte 0), retries with exponential backoff, gives up on a
// connection that sends nothing for StallTimeout, and renames NAME.part to
// NAME only after the digest matches; a wrong digest removes NAME.part and
// returns a *DigestError. Progress (bytes, rate, ETA) and notices go to
// callbacks: the package prints nothing.
//
// A split archive (the PILOT/RanPAC train/test layouts of ImageNet-R,
// ImageNet-A and VTAB) is converted into a folder NAME/train/<class>/,
// NAME/test/<class>/ that dataset's "folder:" kind reads; the folder is
// verified by its file count and the SHA-256 of its sorted file list.
//
// Settings lists the paper's settings (every row of docs/REPRODUCE.md): the
// assets each needs and the exact flycl-lab run arguments.
package fetch
