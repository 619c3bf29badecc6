// Long-running commands (`start`, `mock`) and npm: `npm start`, `npx rpcgate …` run the command in a shell, and npm
// forwards a SIGTERM only to that shell — which dies while this process lives on as an orphan (holding its port, its
// anvils, the terminal's pipes). So when run by npm, a parent that goes away stops the command as a signal would.
// Not otherwise: `nohup rpcgate start &` must outlive its shell.

/** Calls `stop(why)` once the npm-run parent of this process is gone (checked every half second; no-op outside npm). */
export function stopWhenNpmParentExits(stop: (why: string) => void): void {
  if (process.env.npm_command === undefined) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    stop('parent process (npm) exited');
  }, 500);
  timer.unref();
}
