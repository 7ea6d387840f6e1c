package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"

	"gocryptfs/internal/exitcodes"
)

// The daemon keeps no allocation profile unless -memprofile asks for one:
// the stack buckets of the default sampling took 1.4 MiB of a mount's RSS
// after a recursive stat of 60,000 files. Set before main runs, so that
// it is set once for everyone who does not profile.
func init() { runtime.MemProfileRate = 0 }

// memProfileRate is the runtime's default sampling interval, restored for
// -memprofile.
const memProfileRate = 512 * 1024

// startProfiling starts the -cpuprofile and -trace recorders and returns a
// function that stops them and writes -memprofile. A file that cannot be
// created fails with exit code 25.
func startProfiling(a *argContainer, log *slog.Logger) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	fail := func(what string, err error) (func(), error) {
		stop()
		return func() {}, exitcodes.Errorf(exitcodes.Profiler, "%s: %v", what, err)
	}
	if a.cpuprofile != "" {
		f, err := os.Create(a.cpuprofile)
		if err != nil {
			return fail("-cpuprofile", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fail("-cpuprofile", err)
		}
		log.Info(fmt.Sprintf("Writing CPU profile to %s", a.cpuprofile))
		stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
	}
	if a.trace != "" {
		f, err := os.Create(a.trace)
		if err != nil {
			return fail("-trace", err)
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			return fail("-trace", err)
		}
		log.Info(fmt.Sprintf("Writing execution trace to %s", a.trace))
		stops = append(stops, func() { trace.Stop(); f.Close() })
	}
	if a.memprofile != "" {
		// Create the file now so that a bad path fails before mounting.
		f, err := os.Create(a.memprofile)
		if err != nil {
			return fail("-memprofile", err)
		}
		log.Info(fmt.Sprintf("Will write memory profile to %s", a.memprofile))
		runtime.MemProfileRate = memProfileRate
		stops = append(stops, func() {
			runtime.GC()
			if err := pprof.WriteHeapProfile(f); err != nil {
				log.Warn(fmt.Sprintf("writing memory profile: %v", err))
			}
			f.Close()
		})
	}
	return stop, nil
}
