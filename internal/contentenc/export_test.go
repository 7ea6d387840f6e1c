package contentenc

// Accessors that only the tests need (they do not ship).

// PlainBS returns the plaintext block size, DefaultBS.
func (ce *ContentEnc) PlainBS() int { return DefaultBS }

// PBufCap is the capacity of GetPBuf buffers: PoolBlocks·DefaultBS.
func (ce *ContentEnc) PBufCap() int { return ce.pbufCap }

// CBufCap is the capacity of GetCBuf buffers: HeaderLen + PoolBlocks·CipherBS().
func (ce *ContentEnc) CBufCap() int { return ce.cbufCap }
