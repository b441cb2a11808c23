package dev.distlock.preflight;

import java.io.EOFException;
import java.net.ConnectException;
import java.net.SocketException;
import java.security.cert.CertificateException;
import java.util.concurrent.TimeoutException;

import javax.net.ssl.SSLHandshakeException;

import dev.distlock.preflight.Refusal.Target;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.netty.handler.codec.DecoderException;
import org.junit.jupiter.api.Test;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.RedisSystemException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The classifier on the exceptions Spring Data Redis and Lettuce throw, with the texts real servers send. The Redis 7.0
 * texts and the exception chains are those {@link RedisErrorClassifierIntegrationTests} makes a real redis-server 7.0
 * produce; the Redis 7.2 texts are those of its {@code acl.c} and {@code script.c} (not reproducible with the 7.0 on
 * this machine).
 */
class RedisErrorClassifierTests {

	/** Spring Data Redis's wrapping of a failed connection: wrapper over Lettuce's wrapper over the cause. */
	private static RuntimeException connectFailure(Throwable cause) {
		return new RedisConnectionFailureException("Unable to connect to Redis",
				new RedisConnectionException("Unable to connect to 127.0.0.1/<unresolved>:37563", cause));
	}

	/** Spring Data Redis's wrapping of an error reply to a command. */
	private static RuntimeException commandFailure(String reply) {
		return new RedisSystemException("Error in execution", new RedisCommandExecutionException(reply));
	}

	@Test
	void wrongPasswordIsAuthentication() {
		RedisError error = RedisErrorClassifier.classify(connectFailure(
				new RedisCommandExecutionException("WRONGPASS invalid username-password pair or user is disabled.")));
		assertThat(error.kind()).isEqualTo(RedisErrorKind.AUTHENTICATION);
		assertThat(error.message()).isEqualTo("WRONGPASS invalid username-password pair or user is disabled.");
		assertThat(error.refusal()).isNull();
		assertThat(error.isMisconfiguration()).isTrue();
	}

	@Test
	void missingPasswordIsAuthentication() {
		RedisError error = RedisErrorClassifier.classify(connectFailure(new RedisCommandExecutionException(
				"NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> "
						+ "<pass> option can be used to authenticate the client and select the RESP protocol version at "
						+ "the same time")));
		assertThat(error.kind()).isEqualTo(RedisErrorKind.AUTHENTICATION);
		assertThat(RedisErrorClassifier.classify(commandFailure("NOAUTH Authentication required.")).kind())
			.isEqualTo(RedisErrorKind.AUTHENTICATION);
	}

	@Test
	void refusedCommandIsPermissionNamingTheCommand() {
		RedisError error = RedisErrorClassifier
			.classify(commandFailure("NOPERM this user has no permissions to run the 'evalsha' command"));
		assertThat(error.kind()).isEqualTo(RedisErrorKind.PERMISSION);
		assertThat(error.refusal()).isEqualTo(new Refusal(Target.COMMAND, "evalsha"));
		assertThat(error.refusal().grant("lock")).isEqualTo("+evalsha");
		// Redis 7.2 names the user and may name a subcommand
		assertThat(RedisErrorClassifier
			.classify(commandFailure("NOPERM User app has no permissions to run the 'EVALSHA' command"))
			.refusal()).isEqualTo(new Refusal(Target.COMMAND, "evalsha"));
		assertThat(RedisErrorClassifier
			.classify(commandFailure("NOPERM User app has no permissions to run the 'client|setinfo' command"))
			.refusal()).isEqualTo(new Refusal(Target.COMMAND, "client|setinfo"));
	}

	@Test
	void refusedKeyOrChannelIsPermissionToGrantForThePrefix() {
		RedisError key = RedisErrorClassifier
			.classify(commandFailure("NOPERM this user has no permissions to access one of the keys used as arguments"));
		assertThat(key.kind()).isEqualTo(RedisErrorKind.PERMISSION);
		assertThat(key.refusal()).isEqualTo(new Refusal(Target.KEY, null));
		assertThat(key.refusal().grant("orders")).isEqualTo("~orders:*");
		RedisError channel = RedisErrorClassifier.classify(
				commandFailure("NOPERM this user has no permissions to access one of the channels used as arguments"));
		assertThat(channel.refusal()).isEqualTo(new Refusal(Target.CHANNEL, null));
		assertThat(channel.refusal().grant("orders")).isEqualTo("&orders:*");
		// Redis 7.2, terse and verbose
		assertThat(RedisErrorClassifier.classify(commandFailure("NOPERM No permissions to access a key")).refusal())
			.isEqualTo(new Refusal(Target.KEY, null));
		assertThat(RedisErrorClassifier.classify(commandFailure("NOPERM No permissions to access a channel")).refusal())
			.isEqualTo(new Refusal(Target.CHANNEL, null));
		assertThat(RedisErrorClassifier
			.classify(commandFailure("NOPERM No permissions to access the 'lock:{a}:released' channel"))
			.refusal()).isEqualTo(new Refusal(Target.CHANNEL, "lock:{a}:released"));
	}

	@Test
	void aDenialInsideAScriptIsPermission() {
		RedisError command = RedisErrorClassifier.classify(commandFailure("ERR The user executing the script can't run "
				+ "this command or subcommand script: 5f2af38aef0d643491266f94e18ef7a4e2ec66fe, on @user_script:1."));
		assertThat(command.kind()).isEqualTo(RedisErrorKind.PERMISSION);
		// Redis 7.0 does not say which command: the caller, who knows what the script called, must
		assertThat(command.refusal()).isEqualTo(new Refusal(Target.COMMAND, null));
		assertThat(command.refusal().grant("lock")).isNull();
		assertThat(RedisErrorClassifier.classify("ERR The user executing the script can't access at least one of the "
				+ "keys mentioned in the command arguments").refusal()).isEqualTo(new Refusal(Target.KEY, null));
		assertThat(RedisErrorClassifier
			.classify("ERR The user executing the script can't publish to the channel mentioned in the command")
			.refusal()).isEqualTo(new Refusal(Target.CHANNEL, null));
		// Redis 7.2
		assertThat(RedisErrorClassifier.classify(commandFailure("ERR ACL failure in script: User app has no permissions "
				+ "to run the 'hincrby' command script: 5f2af38aef0d643491266f94e18ef7a4e2ec66fe, on @user_script:1."))
			.refusal()).isEqualTo(new Refusal(Target.COMMAND, "hincrby"));
		assertThat(RedisErrorClassifier.classify("ERR ACL failure in script: No permissions to access a channel")
			.refusal()).isEqualTo(new Refusal(Target.CHANNEL, null));
	}

	@Test
	void tlsFailuresAreTlsEvenInsideAConnectionFailure() {
		SSLHandshakeException untrusted = new SSLHandshakeException("PKIX path building failed: "
				+ "sun.security.provider.certpath.SunCertPathBuilderException: unable to find valid certification path "
				+ "to requested target");
		RedisError error = RedisErrorClassifier.classify(connectFailure(untrusted));
		assertThat(error.kind()).isEqualTo(RedisErrorKind.TLS);
		assertThat(error.message()).startsWith("PKIX path building failed");
		SSLHandshakeException noClientCertificate = new SSLHandshakeException(
				"Received fatal alert: certificate_required");
		assertThat(RedisErrorClassifier.classify(
				connectFailure(new DecoderException("javax.net.ssl.SSLHandshakeException: Received fatal alert: "
						+ "certificate_required", noClientCertificate))))
			.isEqualTo(new RedisError(RedisErrorKind.TLS, null, "Received fatal alert: certificate_required"));
		assertThat(RedisErrorClassifier.classify(connectFailure(
				new CertificateException("No subject alternative names matching IP address 10.0.0.7 found"))).kind())
			.isEqualTo(RedisErrorKind.TLS);
		// a client that keeps only the text
		assertThat(RedisErrorClassifier.classify(new RedisException("javax.net.ssl.SSLHandshakeException: No name "
				+ "matching redis.internal found")).kind()).isEqualTo(RedisErrorKind.TLS);
	}

	@Test
	void refusedConnectionsAndTimeoutsAreUnavailable() {
		RedisError refused = RedisErrorClassifier.classify(connectFailure(new ConnectException("Connection refused")));
		assertThat(refused).isEqualTo(new RedisError(RedisErrorKind.UNAVAILABLE, null, "Connection refused"));
		assertThat(RedisErrorClassifier.classify(connectFailure(
				new RedisCommandTimeoutException("Connection initialization timed out after 2 second(s)"))).kind())
			.isEqualTo(RedisErrorKind.UNAVAILABLE);
		assertThat(RedisErrorClassifier.classify(new QueryTimeoutException("Redis command timed out",
				new RedisCommandTimeoutException("Command timed out after 2 second(s)"))).kind())
			.isEqualTo(RedisErrorKind.UNAVAILABLE);
		assertThat(RedisErrorClassifier.classify(new TimeoutException()).kind()).isEqualTo(RedisErrorKind.UNAVAILABLE);
		assertThat(RedisErrorClassifier.classify(connectFailure(new SocketException("Connection reset"))).kind())
			.isEqualTo(RedisErrorKind.UNAVAILABLE);
		assertThat(RedisErrorClassifier.classify(new RedisException("Connection closed")).kind())
			.isEqualTo(RedisErrorKind.UNAVAILABLE);
		assertThat(RedisErrorClassifier.classify(new EOFException()).kind()).isEqualTo(RedisErrorKind.UNAVAILABLE);
	}

	@Test
	void aServerThatCannotServeNowIsUnavailable() {
		assertThat(RedisErrorClassifier.classify(commandFailure("LOADING Redis is loading the dataset in memory")).kind())
			.isEqualTo(RedisErrorKind.UNAVAILABLE);
		assertThat(RedisErrorClassifier.classify(commandFailure("BUSY Redis is busy running a script. You can only call "
				+ "SCRIPT KILL or SHUTDOWN NOSAVE.")).kind()).isEqualTo(RedisErrorKind.UNAVAILABLE);
		assertThat(RedisErrorClassifier.classify("OOM command not allowed when used memory > 'maxmemory'.").kind())
			.isEqualTo(RedisErrorKind.UNAVAILABLE);
	}

	@Test
	void otherErrorRepliesAreOther() {
		RedisError readOnly = RedisErrorClassifier
			.classify(commandFailure("READONLY You can't write against a read only replica."));
		assertThat(readOnly).isEqualTo(
				new RedisError(RedisErrorKind.OTHER, null, "READONLY You can't write against a read only replica."));
		assertThat(readOnly.isMisconfiguration()).isFalse();
		assertThat(RedisErrorClassifier
			.classify(new RedisSystemException("Error in execution",
					new RedisNoScriptException("NOSCRIPT No matching script. Please use EVAL.")))
			.message()).isEqualTo("NOSCRIPT No matching script. Please use EVAL.");
		// an error reply inside a connection failure decides over the wrappers' "unable to connect"
		assertThat(RedisErrorClassifier
			.classify(connectFailure(new RedisCommandExecutionException("ERR unknown command 'HELLO'")))
			.kind()).isEqualTo(RedisErrorKind.OTHER);
		assertThat(RedisErrorClassifier.classify(new IllegalStateException("Unexpected reply")))
			.isEqualTo(new RedisError(RedisErrorKind.OTHER, null, "Unexpected reply"));
		assertThat(RedisErrorClassifier.classify("not an error reply").kind()).isEqualTo(RedisErrorKind.OTHER);
	}

	@Test
	void oldServersAuthenticationErrorsAreAuthentication() {
		assertThat(RedisErrorClassifier.classify(commandFailure("ERR invalid password")).kind())
			.isEqualTo(RedisErrorKind.AUTHENTICATION);
		assertThat(RedisErrorClassifier.classify(commandFailure("ERR Client sent AUTH, but no password is set")).kind())
			.isEqualTo(RedisErrorKind.AUTHENTICATION);
	}

	@Test
	void aCauseCycleEnds() {
		RuntimeException first = new RuntimeException("first");
		RuntimeException second = new RuntimeException("second", first);
		first.initCause(second);
		assertThat(RedisErrorClassifier.classify(first).kind()).isEqualTo(RedisErrorKind.OTHER);
	}

}
