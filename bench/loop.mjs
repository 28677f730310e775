// The JS thread as the bench watches it.
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** Lets timers run (the event-loop monitor's included) between two measured calls. */
export const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));

/**
 * The longest time anything held the JS thread since the last call: a 1 ms timer that notes how
 * late it fires (resolution 1 ms, so values near 1 ms mean "never blocked").
 */
export function holdMonitor() {
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  return () => {
    const max = loopDelay.max / 1e6;
    loopDelay.reset();
    return max;
  };
}
