/** Returns a copy of an OpenAPI document (or part of one) without its prose keywords (scripts/shape.mjs). */
export declare function withoutProse(node: unknown, named?: boolean): unknown;
