// The network and URL-shape stage of the access pipeline (./pipeline.ts): may this principal use this network through
// this access point (A: /{network}/v2/{key}, B: /{network}/{key})?
import type { RpcError } from '@rpcgate/toolkit/errors';
import { forbidden } from '../errors.js';
import type { AccessPoint, Principal } from './keys.js';

/** Why a principal may not use this network / URL shape; undefined when it may. */
export function routeRefusal(p: Principal, network: string, accessPoint: AccessPoint): RpcError | undefined {
  switch (p.kind) {
    case 'static':
      if (p.networks !== undefined && !p.networks.includes(network))
        return forbidden(`API key is not valid for network ${network}`, { reason: 'network', network, accessPoint });
      if (p.accessPoints !== undefined && !p.accessPoints.includes(accessPoint))
        return forbidden(`API key is not valid on this access point`, { reason: 'url', network, accessPoint });
      return undefined;
    case 'app':
      if (accessPoint !== 'A')
        return forbidden(`this is an app key: use /${network}/v2/<key> (access point A)`, {
          reason: 'url',
          network,
          accessPoint,
          expected: 'A',
        });
      if (!p.networks.has(network))
        return forbidden(
          p.networks.size === 0
            ? `the app's chain "${p.chain}" is not served by this deployment`
            : `the app's chain "${p.chain}" has no network ${network} (networks: ${[...p.networks].join(', ')})`,
          { reason: 'network', network, accessPoint, chain: p.chain, networks: [...p.networks] },
        );
      return undefined;
    case 'network-key':
      if (accessPoint !== 'B')
        return forbidden(`this is a network API key: use /${p.network}/<key> (access point B), without /v2`, {
          reason: 'url',
          network,
          accessPoint,
          expected: 'B',
        });
      if (network !== p.network)
        return forbidden(`API key is valid only for network ${p.network}`, {
          reason: 'network',
          network,
          accessPoint,
          keyNetwork: p.network,
        });
      return undefined;
  }
}
