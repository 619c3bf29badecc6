// The account API's `chains_…` methods (contracts/account.openrpc.json); ./index.ts merges the namespaces.
import type * as T from '../../../../generated/account/types.js';
import { cap, type Kit, type Namespace } from './kit.js';

export function chainsHandlers(kit: Kit): Namespace<'chains'> {
  const { deps, chainNetwork } = kit;
  return {
    async chains_list([query]) {
      const q = (query ?? '').trim().toLowerCase();
      const out: T.Chain[] = [];
      for (const [id, nets] of Object.entries(deps.chains)) {
        const networks = nets.filter((n) => deps.networks[n] !== undefined).map(chainNetwork);
        const chain = { id, name: cap(id), networks };
        if (
          q === '' ||
          id.toLowerCase().includes(q) ||
          chain.name.toLowerCase().includes(q) ||
          networks.some((n) => n.network.includes(q) || String(n.chainId) === q)
        )
          out.push(chain);
      }
      return out;
    },
  };
}
