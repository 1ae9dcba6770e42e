package ibsim

import (
	"fmt"
	"strconv"
	"time"
)

// Defaults ibsim and the shim use.
const (
	DefaultSockName   = "sim" // IBSIM_SOCKNAME when unset
	DefaultServerPort = 7070  // IBSIM_SERVER_PORT when unset
	DefaultTimeout    = 5 * time.Second
)

// MaxNodeIDLen is the longest SIM_HOST ibsim can match: its node ID field
// holds 31 bytes and a NUL.
const MaxNodeIDLen = 31

// Config says where ibsim is and where to attach.
type Config struct {
	// SockName is the base of ibsim's abstract unix socket names
	// (IBSIM_SOCKNAME). Unused in inet mode.
	SockName string
	// ServerName, when set, selects inet mode: ibsim's host name or IPv4
	// address (IBSIM_SERVER_NAME).
	ServerName string
	// ServerPort is ibsim's control port in inet mode (IBSIM_SERVER_PORT);
	// client n's data port is ServerPort+n+1.
	ServerPort int
	// Host is the node to attach to, by ibsim node ID or node description
	// (SIM_HOST). Empty attaches to ibsim's default port.
	Host string
	// IsSM asks for the subnet manager role (SIM_SET_ISSM): ibsim then
	// forwards unsolicited SMPs and GMPs for the node to this client and
	// sets the port's IsSM capability bit.
	IsSM bool
	// Timeout bounds each control round trip. Zero means DefaultTimeout.
	Timeout time.Duration
}

// FromEnv builds a Config from the variables the shim reads, looked up with
// getenv (os.Getenv in a program, a map in tests). An unset or empty
// variable takes the default. Unlike the shim, which attaches as SM when
// SIM_SET_ISSM is set even to "", IsSM needs a non-empty value.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		SockName:   getenv("IBSIM_SOCKNAME"),
		ServerName: getenv("IBSIM_SERVER_NAME"),
		ServerPort: DefaultServerPort,
		Host:       getenv("SIM_HOST"),
		IsSM:       getenv("SIM_SET_ISSM") != "",
	}
	if c.SockName == "" {
		c.SockName = DefaultSockName
	}
	if s := getenv("IBSIM_SERVER_PORT"); s != "" {
		p, err := strconv.ParseUint(s, 10, 16)
		if err != nil || p == 0 {
			return Config{}, fmt.Errorf("IBSIM_SERVER_PORT=%q: want a port number 1-65535", s)
		}
		c.ServerPort = int(p)
	}
	return c, nil
}

// inet reports whether the config selects ibsim's inet (UDP) mode.
func (c *Config) inet() bool { return c.ServerName != "" }

func (c *Config) sockName() string {
	if c.SockName != "" {
		return c.SockName
	}
	return DefaultSockName
}

func (c *Config) serverPort() int {
	if c.ServerPort > 0 {
		return c.ServerPort
	}
	return DefaultServerPort
}

func (c *Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// where describes the ibsim instance for error messages.
func (c *Config) where() string {
	if c.inet() {
		return fmt.Sprintf("ibsim at %s port %d", c.ServerName, c.serverPort())
	}
	return fmt.Sprintf("ibsim at @%s:ctl", c.sockName())
}
