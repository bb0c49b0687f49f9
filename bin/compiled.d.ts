export declare const root: string;
export declare const distDir: string;
export declare const sourceDirs: readonly string[];
export declare const manifestFile: string;
export declare function sourceFiles(): string[];
export declare function sourceManifest(files?: readonly string[]): string;
export declare function compiledEntry(entry: string, dist?: string): string | undefined;
