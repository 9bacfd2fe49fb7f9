package messages

import (
	"errors"
	"fmt"
	"testing"
)

// A configuration error, of the runtime's Config or of a layer above it,
// is one type that matches ErrConfig and ErrInvalidArgument, also wrapped.
func TestConfigErrorMatches(t *testing.T) {
	c := DefaultConfig()
	c.TimeoutMs = 0
	err := fmt.Errorf("start: %w", c.Validate())
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "timeoutMs" {
		t.Fatalf("Validate: %v, want a *ConfigError for timeoutMs", err)
	}
	if !errors.Is(err, ErrConfig) || !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("%v: errors.Is ErrConfig %v, ErrInvalidArgument %v; want both", err,
			errors.Is(err, ErrConfig), errors.Is(err, ErrInvalidArgument))
	}
	if errors.Is(InvalidArgument("x"), ErrConfig) {
		t.Fatal("an argument error matches ErrConfig")
	}
}
