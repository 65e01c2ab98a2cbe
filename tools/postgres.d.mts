/** The admin connection when TEST_DATABASE_URL is unset: local trust. */
export declare const DEFAULT_TEST_DATABASE_URL: string;
/** The admin URL: TEST_DATABASE_URL or local trust. */
export declare function testDatabaseUrl(): string;
/** Answers why PostgreSQL cannot be reached at `adminUrl`, or `undefined` when it can. */
export declare function postgresUnreachable(adminUrl?: string): Promise<string | undefined>;
/** A database of its own, created by {@link createTestDatabase}. */
export interface TestDatabase {
  name: string;
  /** Its connection URL (the admin URL with this database's name). */
  url: string;
  /** DROP DATABASE … WITH (FORCE). */
  drop(): Promise<void>;
}
/** Creates an empty database `<prefix>_<pid>_<random>` on the server of `adminUrl` (default TEST_DATABASE_URL). */
export declare function createTestDatabase(options?: {
  prefix?: string;
  adminUrl?: string;
}): Promise<TestDatabase>;
