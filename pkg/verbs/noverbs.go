//go:build !cgo || noverbs

package verbs

// DeviceNames returns ErrNoVerbs: this build has no libibverbs.
func DeviceNames() ([]string, error) { return nil, ErrNoVerbs }

// Devices returns ErrNoVerbs: this build has no libibverbs.
func Devices() ([]Device, error) { return nil, ErrNoVerbs }

// ForkInit returns ErrNoVerbs: this build has no libibverbs.
func ForkInit() error { return ErrNoVerbs }

// ForkInitialized returns ErrNoVerbs: this build has no libibverbs.
func ForkInitialized() (ForkStatus, error) { return 0, ErrNoVerbs }
