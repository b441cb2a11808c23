package dev.distlock.interceptor;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

import dev.distlock.annotation.DistributedLock;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.core.annotation.AliasFor;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The interceptor's runtime hints, each checked against what the interceptor really does at run time: the proxy it
 * synthesizes, the root object its expressions read, the types it looks up by name.
 */
class DistributedLockRuntimeHintsTests {

	private final RuntimeHints hints = new RuntimeHints();

	DistributedLockRuntimeHintsTests() {
		new DistributedLockRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
	}

	@Test
	void theSynthesizedAnnotationIsAJdkProxyOfExactlyTheRegisteredInterfaces() throws Exception {
		for (String name : new String[] { "direct", "composed" }) {
			Method method = Locked.class.getMethod(name, String.class);
			DistributedLock merged = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);

			assertThat(merged).isNotNull();
			assertThat(merged.key()).isEqualTo("#sku");
			assertThat(Proxy.isProxyClass(merged.getClass())).as("synthesized for " + name).isTrue();
			assertThat(this.hints).as(name).matches(RuntimeHintsPredicates.proxies().forInterfaces(merged.getClass().getInterfaces()));
		}
	}

	@Test
	void keyExpressionsMayReadEveryPropertyOfTheRootObject() {
		for (String property : new String[] { "method", "methodName", "args", "target", "targetClass" }) {
			Method accessor = ReflectionUtils.findMethod(LockKeyEvaluator.LockExpressionRoot.class, property);
			assertThat(accessor).as(property).isNotNull();
			assertThat(this.hints).as(property).matches(RuntimeHintsPredicates.reflection().onMethodInvocation(accessor));
		}
	}

	@Test
	void theTypesLookedUpByNameAreRegistered() {
		assertThat(this.hints).matches(RuntimeHintsPredicates.reflection().onType(TypeReference.of("reactor.core.publisher.Mono")))
			.matches(RuntimeHintsPredicates.reflection().onType(TypeReference.of("kotlinx.coroutines.reactor.MonoKt")));
		assertThat(ReactiveReturnTypes.REACTOR_PRESENT).as("the name is Reactor's").isTrue();
		assertThat(ReactiveReturnTypes.COROUTINES_REACTOR_PRESENT).as("the name is kotlinx-coroutines-reactor's").isTrue();
	}

	@Test
	void springsAotFindsTheRegistrarAndTheProcessorInAotFactories() {
		assertThat(AotServices.factories().load(RuntimeHintsRegistrar.class))
			.hasAtLeastOneElementOfType(DistributedLockRuntimeHints.class);
		assertThat(AotServices.factories().load(BeanRegistrationAotProcessor.class))
			.hasAtLeastOneElementOfType(DistributedLockBeanRegistrationAotProcessor.class);
	}

	/** A team's own lock annotation, with @DistributedLock only as its meta-annotation. */
	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@DistributedLock(ttl = "10s")
	@interface SkuLock {

		@AliasFor(annotation = DistributedLock.class, attribute = "key")
		String value();

	}

	static class Locked {

		@DistributedLock("#sku")
		public void direct(String sku) {
		}

		@SkuLock("#sku")
		public void composed(String sku) {
		}

	}

}
