export { loadOrCreateServerSecret, parseSecret, SECRET_BYTES, SECRET_FILE } from './serverSecret.js';
export {
  newApiKey,
  newId,
  newSessionToken,
  hashSessionToken,
  hashKey,
  encryptKey,
  decryptKey,
  encryptWebhookSecret,
  decryptWebhookSecret,
} from './keys.js';
export { hashPassword, verifyPassword } from './passwords.js';
export { base58 } from './base58.js';
