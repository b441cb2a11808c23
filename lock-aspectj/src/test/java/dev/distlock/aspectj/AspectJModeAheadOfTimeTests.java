package dev.distlock.aspectj;

import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.interceptor.DistributedLockInterceptor;
import org.junit.jupiter.api.Test;

import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.GeneratedFiles.Kind;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.javapoet.ClassName;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring's ahead-of-time processing of an application in AspectJ mode, with a bean compiled by ajc (this module's test
 * build weaves it): it processes, defines the interceptor the aspect runs and no proxy, and registers what the aspect
 * and the locked method need in a native image.
 */
class AspectJModeAheadOfTimeTests {

	@Test
	void processesAnAspectJModeApplicationAheadOfTime() throws Exception {
		Processed processed = process();

		RuntimeHints hints = processed.hints();
		assertThat(hints)
			.matches(RuntimeHintsPredicates.reflection().onMethodInvocation(DistributedLockAspect.class.getMethod("aspectOf")))
			.matches(RuntimeHintsPredicates.reflection()
				.onMethodInvocation(AspectJModeIntegrationTests.Shop.class.getMethod("purchase", String.class)));
		assertThat(processed.files().getGeneratedFiles(Kind.CLASS).keySet()).as("no proxy class")
			.noneMatch((name) -> name.contains("Shop$$SpringCGLIB"));
		assertThat(processed.files().getGeneratedFiles(Kind.SOURCE).keySet()).as("the interceptor's bean definition")
			.anyMatch((name) -> name.endsWith("DistributedLockAutoConfiguration__BeanDefinitions.java"));
		assertThat(processed.files().getGeneratedFileContent(Kind.SOURCE,
				"dev/distlock/autoconfigure/DistributedLockAutoConfiguration__BeanDefinitions.java"))
			.contains(DistributedLockInterceptor.class.getSimpleName())
			.doesNotContain("DistributedLockBeanPostProcessor");
	}

	@Test
	void aspectOfIsWhatAspectsCallsReflectively() throws Exception {
		RuntimeHints hints = new RuntimeHints();
		new AspectJLockRuntimeHints().registerHints(hints, getClass().getClassLoader());

		assertThat(hints).matches(RuntimeHintsPredicates.reflection()
			.onMethodInvocation(DistributedLockAspect.class.getMethod("aspectOf")));
	}

	private static Processed process() {
		ApplicationContextRunner runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.port=1")
			.withUserConfiguration(AspectJModeIntegrationTests.AspectJMode.class)
			.withBean(AspectJModeIntegrationTests.Shop.class);
		AtomicReference<Processed> processed = new AtomicReference<>();
		runner.prepare((context) -> {
			InMemoryGeneratedFiles files = new InMemoryGeneratedFiles();
			DefaultGenerationContext generation = new DefaultGenerationContext(
					new ClassNameGenerator(ClassName.get(AspectJModeAheadOfTimeTests.class)), files);
			new ApplicationContextAotGenerator()
				.processAheadOfTime(context.getSourceApplicationContext(GenericApplicationContext.class), generation);
			generation.writeGeneratedContent();
			processed.set(new Processed(generation.getRuntimeHints(), files));
		});
		return processed.get();
	}

	record Processed(RuntimeHints hints, InMemoryGeneratedFiles files) {
	}

}
