package zfsmodel

import "strings"

// zfs send and zfs receive.

func (c *cli) zfsSend(args []string) int {
	opts, ops := getopt(args, ":i:I:RsDpVvnPLeht:cwbd:SX:")
	var so SendOptions
	dry, verbose := false, false
	token := ""
	for _, o := range opts {
		switch o.c {
		case 'i':
			so.From = o.arg
		case 'I':
			so.From, so.Intermediates = o.arg, true
		case 'R':
			so.Replicate = true
		case 'p':
			so.Props = true
		case 'n':
			dry = true
		case 'v', 'P':
			verbose = true
		case 't':
			token = o.arg
		case 'w':
			so.Raw = true
		case 's', 'D', 'V', 'L', 'e', 'h', 'c', 'b', 'd', 'S', 'X':
		default:
			return c.badOpt(o)
		}
	}
	if token != "" {
		if len(ops) > 0 {
			c.errorf("too many arguments\n")
			return c.usage()
		}
		if dry {
			return 0
		}
		if err := c.m.ResumeSend(c.out, token); err != nil {
			return c.fail(err)
		}
		return 0
	}
	if code, ok := c.operands(ops, "snapshot"); !ok {
		return code
	}
	if so.From != "" && !strings.ContainsAny(so.From, "@#") && !so.Replicate && !so.Intermediates {
		c.errorf("Warning: incremental source didn't specify type, assuming snapshot. Use '@' or '#' prefix to avoid ambiguity.\n")
	}
	if dry {
		if verbose {
			kind := "full"
			if so.From != "" {
				kind = "incremental"
			}
			c.errorf("%s send of %s estimated size is 0B\ntotal estimated size is 0B\n", kind, ops[0])
		}
		return 0
	}
	if err := c.m.Send(c.out, ops[0], so, c.err); err != nil {
		return c.fail(err)
	}
	return 0
}

func (c *cli) zfsReceive(args []string) int {
	opts, ops := getopt(args, ":o:x:dehMnuvFsAc")
	ro := ReceiveOptions{Props: map[string]string{}}
	var props []kv
	abort := false
	for _, o := range opts {
		switch o.c {
		case 'o':
			var ok bool
			if props, ok = c.parseProp(props, o.arg); !ok {
				return c.usage()
			}
			ro.Props[props[len(props)-1].name] = props[len(props)-1].value
		case 'x':
			for _, x := range ro.Exclude {
				if x == o.arg {
					c.errorf("property '%s' specified multiple times\n", o.arg)
					return c.usage()
				}
			}
			ro.Exclude = append(ro.Exclude, o.arg)
		case 'd', 'e':
			if o.c == 'd' && ro.LastElem || o.c == 'e' && ro.Discard {
				c.errorf("invalid option combination: -d and -e are mutually exclusive\n")
				return c.usage()
			}
			if o.c == 'd' {
				ro.Discard = true
			} else {
				ro.LastElem = true
			}
		case 'n':
			ro.DryRun = true
		case 'u':
			ro.NoMount = true
		case 'v':
			ro.Verbose = c.out
		case 'F':
			ro.Force = true
		case 'A':
			abort = true
		case 's':
			ro.Resumable = true
		case 'h', 'M', 'c':
		default:
			return c.badOpt(o)
		}
	}
	if code, ok := c.operands(ops, "snapshot"); !ok {
		return code
	}
	if abort {
		if err := c.m.abortReceive(ops[0]); err != nil {
			return c.fail(err)
		}
		return 0
	}
	if err := c.m.Receive(c.in, ops[0], ro); err != nil {
		return c.fail(err)
	}
	return 0
}
