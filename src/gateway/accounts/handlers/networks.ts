// The account API's `networks_…` methods (contracts/account.openrpc.json); ./index.ts merges the namespaces.
import type { Kit, Namespace } from './kit.js';

export function networksHandlers(kit: Kit): Namespace<'networks'> {
  const { deps, chainNetwork } = kit;
  return {
    async networks_list() {
      return Object.keys(deps.networks).map(chainNetwork);
    },
  };
}
