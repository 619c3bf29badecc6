// Subscriptions over WebSocket: the shared per-network feed (./feed.ts) and eth_subscribe / eth_unsubscribe (./manager.ts).
export { NetworkFeed, matchLog, type FeedSubscriber, type FeedUpstream, type LogFilter } from './feed.js';
export {
  CLOSE_QUOTA,
  Subscriptions,
  notificationsNotSupported,
  type SocketCallContext,
  type SubscriptionsOptions,
} from './manager.js';
