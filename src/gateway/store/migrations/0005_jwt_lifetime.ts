// Per-app JWT maximum lifetime (issue 14 item 8): tokens whose `exp - iat` exceeds it are refused. Existing apps get
// the default, 24 h (a token valid for years was accepted before); null = no maximum, set by the owner.
import type { Kysely, Migration } from 'kysely';

export function jwtLifetime(): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .alterTable('apps')
        .addColumn('jwt_max_lifetime_sec', 'integer', (c) => c.defaultTo(86_400))
        .execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('apps').dropColumn('jwt_max_lifetime_sec').execute();
    },
  };
}
