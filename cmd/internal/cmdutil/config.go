package cmdutil

import (
	"errors"
	"io/fs"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/ibdiagconf"
)

// ibdiagConfEnv names the variable that replaces the default ibdiag.conf
// path (tests point it at their own file, or at none).
const ibdiagConfEnv = "IBTOOL_IBDIAG_CONF"

// defaultIBDiagConf is the ibdiag.conf a real run reads before its
// options: $IBTOOL_IBDIAG_CONF, else infiniband-diags' own.
func defaultIBDiagConf(getenv func(string) string) string {
	if p := getenv(ibdiagConfEnv); p != "" {
		return p
	}
	return ibdiagconf.DefaultPath
}

// loadConfig reads the default ibdiag.conf, when there, then -z's file
// over it, as ibdiag_process_opts does, and applies what they set to the
// flags not given. A missing default file is silent; a missing -z file, an
// unreadable file or a bad line is a usage error naming the file (and the
// line).
func (o *CommonOptions) loadConfig(fl *pflag.FlagSet) error {
	if fl.Lookup("config") == nil {
		return nil
	}
	if o.defaultConfig != "" {
		err := o.Config.Load(o.defaultConfig)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &UsageError{Err: err}
		}
	}
	if o.ConfigFile != "" {
		if err := o.Config.Load(o.ConfigFile); err != nil {
			return &UsageError{Err: err}
		}
	}
	return o.applyConfig(fl)
}

// applyConfig sets from o.Config each common option whose flag the tool
// has and the command line did not give: flags win over the files.
func (o *CommonOptions) applyConfig(fl *pflag.FlagSet) error {
	cfg := &o.Config
	unset := func(name string) bool {
		f := fl.Lookup(name)
		return f != nil && !f.Changed
	}
	// --port names the whole local port: the file's CA or Port would
	// contradict it.
	portSpec := fl.Changed("port")
	if cfg.Has(ibdiagconf.KeyCA) && unset("Ca") && !portSpec {
		if _, err := endport.FromFlags(cfg.CA, 0); err != nil {
			return UsageErrorf("%s: %v", cfg.Where(ibdiagconf.KeyCA), err)
		}
		o.CA = cfg.CA
	}
	if cfg.Has(ibdiagconf.KeyPort) && unset("Port") && !portSpec {
		o.portArg = strconv.Itoa(cfg.Port)
	}
	if cfg.Has(ibdiagconf.KeyTimeout) && unset("timeout") {
		o.timeoutM = cfg.TimeoutMS
	}
	if cfg.Has(ibdiagconf.KeySAKey) && o.saFlags && unset("smkey") {
		o.SMKey = cfg.SAKey
	}
	if cfg.Has(ibdiagconf.KeyMKey) && unset("m_key") {
		o.MKey = cfg.MKey
	}
	if d := o.discovery; d != nil {
		if cfg.Has(ibdiagconf.KeyMLXEPI) && unset("no-mlx-epi") {
			d.NoMlxEPI = !cfg.MLXEPI
		}
	}
	return nil
}

// ConfigSAKey returns the SM_Key the ibdiag.conf files set (sa_key), for a
// tool with an --smkey of its own (saquery) to use when that is not given.
func (o *CommonOptions) ConfigSAKey() (uint64, bool) {
	return o.Config.SAKey, o.Config.Has(ibdiagconf.KeySAKey)
}
