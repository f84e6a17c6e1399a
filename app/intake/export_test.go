package intake

// BlobFile is blobFile for the package's external tests (the statistics
// of shards, which app/deploy computes from an Input).
var BlobFile = blobFile
