// A separate rpcgate process (the limits e2e and fault tests, via ./rpcgate-child.ts): startService(config from argv[2]),
// prints `READY <url>`, stops cleanly on SIGTERM. Its own store connection, key index, limiter and meter.
import { startService } from '../../src/gateway/server/service.js';

const svc = await startService(JSON.parse(process.argv[2]));
process.stdout.write(`READY ${svc.url}\n`);
process.once('SIGTERM', () => void svc.stop().finally(() => process.exit(0)));
