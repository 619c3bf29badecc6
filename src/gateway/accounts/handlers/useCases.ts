// The account API's `useCases_…` methods (contracts/account.openrpc.json); ./index.ts merges the namespaces.
import { USE_CASES, type Namespace } from './kit.js';

export function handlersForUseCases(): Namespace<'useCases'> {
  return {
    async useCases_list() {
      return [...USE_CASES];
    },
  };
}
