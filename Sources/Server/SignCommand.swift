import Core
import Foundation
import Signing

/// `aspect sign URL [--signing-key KEY | --config PATH]`: prints the URL with its `sig`.
enum SignCommand {
    static let usage = """
        Usage: aspect sign 'http://host/thumb?src=photo.jpg&w=300' [--signing-key KEY] [--config PATH]

        Prints the URL with sig= appended (any sig it had is replaced), signed with
        security.signingKey from the flag, ASPECT_SECURITY_SIGNINGKEY or the config file.
        """

    static func run(_ args: [String]) -> Int32 {
        if args.contains("-h") || args.contains("--help") {
            print(usage)
            return 0
        }
        guard let url = args.first, !url.hasPrefix("-") else {
            Console.error("aspect sign: give the URL to sign\n\n\(usage)")
            return 2
        }
        guard case .loaded(let config) = ConfigCommand.load(Array(args.dropFirst())) else { return 2 }
        guard config.signingEnabled else {
            Console.error("aspect sign: no signing key: set security.signingKey (or --signing-key)")
            return 2
        }
        let (base, query) =
            url.firstIndex(of: "?").map { (String(url[..<$0]), String(url[url.index(after: $0)...])) } ?? (url, "")
        let path = URL(string: base)?.path ?? base
        let params: QueryParameters
        do throws(AspectError) {
            params = try QueryParameters.decode(query)
        } catch {
            Console.error("aspect sign: \(error.message)")
            return 2
        }
        let kept = query.split(separator: "&").filter { !$0.hasPrefix("sig=") }.joined(separator: "&")
        let sig = Signer(key: config.security.signingKey).signature(path: path.isEmpty ? "/thumb" : path, params)
        print(base + "?" + (kept.isEmpty ? "" : kept + "&") + "sig=" + sig)
        return 0
    }
}
