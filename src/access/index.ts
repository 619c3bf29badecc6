export { ConfigKeyStore, checkKey, generateDevKey, type KeyStore, type KeyStoreWithReasons, type Principal, type AccessPoint } from './keys.js';
