// The method descriptor types live in @rpcgate/client (generated code and the client runtime are typed with them); the
// engine and the rest of the toolkit take them from there.
export type {
  Extensions,
  MethodDescriptor,
  MethodTable,
  ParamsByNameOf,
  ParamsOf,
  ResultOf,
  ValidateFn,
  ValidatorTable,
} from '@rpcgate/client';
